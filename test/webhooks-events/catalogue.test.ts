// The webhook event catalogue as integrators read it (issue 34): every event of the issue in
// /openapi.json's `webhooks` (OpenAPI 3.1) with a payload schema its example satisfies, and in
// /documentation with the signing headers and how to verify them.
import t from 'tap';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { startTestApp } from '../helpers/app.js';
import { request } from '../helpers/http.js';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

/** The issue's list, and the test event. */
const ISSUE_EVENTS = [
  'ticket.issued', 'ticket.checked_in', 'ticket.checked_out', 'ticket.refunded', 'ticket.transferred',
  'order.opened', 'order.fired', 'order.settled', 'order.refunded',
  'reservation.created', 'reservation.updated', 'reservation.checked_in',
  'checkin.task.created', 'checkin.task.assigned', 'workflow.task.completed',
  'lead.created', 'support_ticket.created', 'chat.conversation.created', 'chat.message.created', 'customer.created',
  'ping',
];

const app = await startTestApp(t, { modules: ['reference'] });

t.test('catalogue - /openapi.json lists every event under webhooks, each payload schema satisfied by its example', async (t) => {
  const doc = (await request(app.url, '/openapi.json')).body;
  t.equal(doc.openapi.startsWith('3.1'), true, 'OpenAPI 3.1: the webhooks object is standard');
  t.same(Object.keys(doc.webhooks).sort(), [...ISSUE_EVENTS].sort());
  const ajv = new Ajv({ strict: false, allErrors: true });
  addFormats(ajv);
  for (const type of ISSUE_EVENTS) {
    const op = doc.webhooks[type].post;
    t.match(op.summary, type);
    t.ok(op.description.length > 20, `${type}: says when it is sent`);
    t.same(op.parameters.map((p: { name: string }) => p.name), ['webhook-id', 'webhook-timestamp', 'webhook-signature'], `${type}: the signing headers`);
    const media = op.requestBody.content['application/json'];
    t.same(media.schema.required, ['id', 'type', 'createdAt', 'orgId', 'data']);
    t.equal(media.example.type, type);
    const valid = ajv.validate(media.schema, media.example);
    t.ok(valid, `${type}: the example fits the schema ${JSON.stringify(ajv.errors)}`);
    t.notOk(ajv.validate(media.schema, { ...media.example, type: 'something.else' }), `${type}: the type is fixed`);
  }
});

t.test('catalogue - /documentation tells how to verify a delivery and lists every event', async (t) => {
  const md = (await request(app.url, '/documentation.md')).text;
  t.match(md, '## Webhooks');
  for (const h of ['webhook-id', 'webhook-timestamp', 'webhook-signature', 'standardwebhooks', 'whsec_']) t.match(md, h);
  for (const type of ISSUE_EVENTS) t.match(md, `| \`${type}\` |`, `${type} has a row`);
  const page = await request(app.url, '/documentation');
  t.match(page.text, 'chat.message.created', 'the page carries the same guide');
});
