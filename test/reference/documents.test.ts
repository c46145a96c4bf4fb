// The published documents as tools read them: every example in /openapi.json fits its schema and
// every hand-written one works against a live server; Redocly's recommended lint finds no error;
// @asyncapi/parser reads /asyncapi.json without error, and every socket event the server handles
// or emits is in it.
import { Parser } from '@asyncapi/parser';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { io } from 'socket.io-client';
import t from 'tap';
import { handledEvents, NAMESPACES, type Namespace } from '../../edge/reference/asyncapi.js';
import { FLOW, IDS } from '../../edge/reference/examples.js';
import { startTestApp, tempDir } from '../helpers/app.js';
import { request } from '../helpers/http.js';

type Json = Record<string, any>;

const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: true });
// ajv-formats is CommonJS with a default export; under NodeNext its type is the module object.
const addFormats = addFormatsModule as unknown as (a: Ajv) => Ajv;
addFormats(ajv);
const check = (schema: unknown, value: unknown): string[] => {
  const v = ajv.compile(schema as object);
  return v(value) ? [] : (v.errors ?? []).map((e: { instancePath: string; message?: string }) => `${e.instancePath} ${e.message}`);
};

/** Placeholder → live value, learnt by walking an example answer beside the live one. */
function learn(example: unknown, actual: unknown, into: Map<string, unknown>): void {
  if (typeof example === 'string' && typeof actual === 'string') {
    if (example !== actual && example.length >= 6 && !/^\d{4}-\d{2}-\d{2}T/.test(example)) into.set(example, actual);
  } else if (Array.isArray(example) && Array.isArray(actual)) {
    example.forEach((v, i) => learn(v, actual[i], into));
  } else if (example && actual && typeof example === 'object' && typeof actual === 'object') {
    for (const k of Object.keys(example)) learn((example as Json)[k], (actual as Json)[k], into);
  }
}
function recall(v: unknown, ids: Map<string, unknown>): any {
  if (typeof v === 'string') return ids.has(v) ? ids.get(v) : v;
  if (Array.isArray(v)) return v.map((x) => recall(x, ids));
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, recall(x, ids)]));
  return v;
}

t.test('the published documents', async (t) => {
  const app = await startTestApp(t);
  const url = app.url;
  const doc: Json = (await request(url, '/openapi.json')).body;
  const ops = Object.entries<Json>(doc.paths).flatMap(([p, o]) => Object.entries<Json>(o).map(([m, op]) => ({ key: `${m.toUpperCase()} ${p}`, op })));

  t.test('every operation has examples that fit its schemas', async (t) => {
    let bodies = 0;
    let answers = 0;
    for (const { key, op } of ops) {
      if (op.requestBody) {
        bodies++;
        const media = op.requestBody.content['application/json'] ?? Object.values<Json>(op.requestBody.content)[0];
        const examples = Object.entries<Json>(media.examples ?? {});
        t.ok(examples.length, `${key}: a request example`);
        for (const [name, ex] of examples) t.same(check(media.schema, ex.value), [], `${key} request example ${name} fits`);
      }
      for (const p of op.parameters ?? []) t.ok(p.example !== undefined, `${key}: parameter ${p.name} has an example`);
      const ok = Object.entries<Json>(op.responses).find(([s]) => s.startsWith('2'))![1];
      if (ok.content) {
        answers++;
        const [type, media] = Object.entries<Json>(ok.content)[0];
        t.ok(media.examples || media.example, `${key}: an answer example`);
        if (type === 'application/json') for (const [name, ex] of Object.entries<Json>(media.examples)) t.same(check(media.schema, ex.value), [], `${key} answer example ${name} fits`);
      }
    }
    t.ok(bodies > 100 && answers > 200, `${bodies} request bodies and ${answers} answers, every one with an example`);
  });

  t.test('the hand-written examples work against a live server, in story order', async (t) => {
    const ids = new Map<string, unknown>();
    let headers: Record<string, string> = {};
    for (const [key, ex] of FLOW) {
      const [method, path] = key.split(' ');
      const params = recall(ex.params ?? {}, ids) as Record<string, string>;
      const live = path.replace(/:([A-Za-z0-9_]+)/g, (_, n: string) => encodeURIComponent(params[n]));
      const r = await request(url, live, { method, headers: ex.auth ? headers : { orgid: headers.orgid ?? '' }, body: recall(ex.body, ids) });
      t.equal(r.status, ex.status, `${key} (${ex.name}) answers ${ex.status}: ${r.status === ex.status ? '' : r.text.slice(0, 300)}`);
      const op = doc.paths[path.replace(/:([A-Za-z0-9_]+)/g, '{$1}')][method.toLowerCase()];
      const schema = op.responses[String(ex.status)].content['application/json'].schema;
      t.same(check(schema, r.body), [], `${key} (${ex.name}): the live answer fits the documented schema`);
      t.same(check(schema, ex.response), [], `${key} (${ex.name}): the example answer fits it too`);
      t.same(Object.keys(ex.response as Json).sort(), Object.keys(r.body).sort(), `${key} (${ex.name}): the example shows the fields the server answers`);
      learn(ex.response, r.body, ids);
      if (key === 'POST /profile/user/signup') headers = { orgid: r.body.orgId, authorization: `Bearer ${r.body.token}` };
    }
    t.ok(ids.has(IDS.event) && ids.has(IDS.ticketNumber) && ids.has(IDS.tab), 'the story gave live ids to the later examples');
    const denied = FLOW.find(([, e]) => e.name === 'scanDenied')![1];
    t.match(denied.response, { success: false, reason: 'already_checked_in' });
  });

  t.test('Redocly lint (recommended): no errors; the warnings left are the ambiguous paths', async (t) => {
    const file = join(tempDir(t, 'bp-lint-'), 'openapi.json');
    writeFileSync(file, JSON.stringify(doc));
    const run = spawnSync(process.execPath, ['node_modules/@redocly/cli/bin/cli.js', 'lint', file, '--format=json', '--extends=recommended'], {
      encoding: 'utf8',
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' },
      timeout: 60_000,
    });
    const out = JSON.parse(run.stdout.slice(run.stdout.indexOf('{'))) as { totals: { errors: number; warnings: number }; problems: Array<{ ruleId: string; message: string }> };
    t.equal(out.totals.errors, 0, `no errors: ${out.problems.filter((p) => p.ruleId !== 'no-ambiguous-paths').map((p) => p.message).join('; ')}`);
    t.same([...new Set(out.problems.map((p) => p.ruleId))].filter((r) => r !== 'no-ambiguous-paths'), [], 'every warning left is an ambiguous path (explained in the README)');
    t.comment(`redocly: ${out.totals.errors} errors, ${out.totals.warnings} warnings`);
    // And what the lint does not check: the hygiene the issue asks for.
    t.same(doc.servers.map((s: Json) => s.url), [app.url], 'servers names the address the request came in on');
    const proxied = (await request(app.url, '/openapi.json', { headers: { host: 'api.example.com', 'x-forwarded-proto': 'https' } })).body;
    t.same(proxied.servers.map((s: Json) => s.url), ['https://api.example.com'], 'behind a proxy too');
    const odd = (await request(app.url, '/openapi.json', { headers: { host: 'evil"host' } })).body;
    t.same(odd.servers.map((s: Json) => s.url), ['http://localhost'], 'a Host that is not one is not echoed');
    t.ok(doc.info.license?.name);
    t.ok(doc.tags.every((x: Json) => typeof x.description === 'string' && x.description.length > 10), 'every tag described');
    t.equal(doc.externalDocs.url, '/asyncapi.json');
    const amount = doc.paths['/storefront/pos/tab/{id}/settle'].post.requestBody.content['application/json'].schema.properties.amount;
    t.same(amount.oneOf.map((x: Json) => x.type), ['number', 'string'], 'money is typed: a number or a decimal string');
    t.same(check(amount, '12.50'), []);
    t.not(check(amount, '12,50').length, 0);
    const sse = doc.paths['/ai/stream/{streamId}'].get.responses['200'].content['text/event-stream'];
    t.match(sse.example, /event: done/, 'the SSE stream documents its event format');
  });

  t.test('AsyncAPI: parses without errors and names every event the server handles or emits', async (t) => {
    const r = await request(url, '/asyncapi.json');
    t.equal(r.status, 200);
    const { document, diagnostics } = await new Parser().parse(r.text);
    t.ok(document, 'parsed');
    t.same(diagnostics.filter((d) => d.severity === 0).map((d) => d.message), [], 'no errors');
    const async: Json = r.body;
    t.equal(async.asyncapi, '3.0.0');
    const names = (ns: Namespace, action: string) =>
      new Set(
        Object.values<Json>(async.operations)
          .filter((o) => o.action === action && o.channel.$ref === `#/channels/${ns}`)
          .map((o) => async.components.messages[o.messages[0].$ref.split('/').pop()].name as string),
      );
    const handled = handledEvents(app.deps.config);
    for (const ns of Object.keys(NAMESPACES) as Namespace[]) {
      t.same([...names(ns, 'receive')].sort(), Object.keys(handled[ns]).sort(), `${ns}: every event the server validates, and no other`);
      for (const o of Object.values<Json>(async.operations).filter((o) => o.action === 'receive')) t.ok(o.reply, 'client events document their ack');
    }
    // What the server emits, read from its source: a new emit() with an undocumented name fails here.
    const dir = 'edge/sockets';
    const emitted: Record<Namespace, Set<string>> = { chat: new Set(), community: new Set() };
    for (const f of readdirSync(dir).filter((x) => x.endsWith('.ts'))) {
      for (const line of readFileSync(join(dir, f), 'utf8').split('\n')) {
        const call = /\b(?:emit|emitChat|emitUser|publishLocal)\((.*)$/.exec(line);
        const ternary = /\bev = .*\? '([^']+)' : '([^']+)'/.exec(line);
        const found: string[] = ternary ? [ternary[1], ternary[2]] : [];
        if (call) {
          // The event name is an argument of its own ('name', or 'name')), not a literal inside one.
          const lit = /'([A-Za-z][\w.-]*)'\s*[,)]/.exec(call[1]);
          if (lit) found.push(lit[1]);
        }
        if (!found.length) continue;
        const spaces: Namespace[] = f.startsWith('chat-') ? ['chat'] : f.startsWith('community-') ? ['community'] : f === 'events.ts' ? ['chat', 'community'] : line.includes('communityTopic') ? ['community'] : ['chat'];
        for (const ns of spaces) for (const n of found) emitted[ns].add(n);
      }
    }
    t.ok(emitted.chat.size > 15 && emitted.community.size >= 4, `read ${emitted.chat.size} + ${emitted.community.size} emitted names`);
    for (const ns of Object.keys(NAMESPACES) as Namespace[]) {
      const documented = names(ns, 'send');
      t.same([...emitted[ns]].filter((n) => !documented.has(n)), [], `${ns}: every emitted event is documented`);
    }
    t.match(async.channels.chat['x-handshake'], { $ref: '#/components/schemas/chatHandshake' });
    t.ok(async.components.schemas.communityHandshake.required.includes('token'), 'the handshake names its token');

    // The live server agrees: every documented client event is handled (a refusal names the
    // payload, never "unknown event"), and an undocumented one is unknown.
    const signup = await request(url, '/profile/user/signup', { body: { email: 'sock@example.com', password: 'correct-horse-battery', orgName: 'Socket Check' } });
    const auth = { token: signup.body.token, orgId: signup.body.orgId };
    for (const ns of Object.keys(NAMESPACES) as Namespace[]) {
      const s = io(url + NAMESPACES[ns].address, { transports: ['websocket'], forceNew: true, reconnection: false, auth });
      t.teardown(() => s.disconnect());
      await new Promise<void>((resolve, reject) => {
        s.once('connect', () => resolve());
        s.once('connect_error', reject);
      });
      const ask = (ev: string) => s.timeout(5000).emitWithAck(ev, { chatId: 'not-an-id' }) as Promise<Json>;
      for (const ev of names(ns, 'receive')) {
        const reply = await ask(ev);
        t.notMatch(String(reply?.error?.message ?? ''), /unknown event/, `${ns} ${ev} is handled`);
      }
      t.match((await ask('noSuchEvent')).error, { statusCode: 400, message: /unknown event/ });
      s.disconnect();
    }
  });

  t.test('the Markdown views and /llms.txt carry the examples and the channels', async (t) => {
    const llms = await request(url, '/llms.txt');
    t.match(llms.text, /\/asyncapi\.json/);
    t.match(llms.text, /\/documentation\/channels\.md/);
    t.notMatch(llms.text, /: 1 endpoints/);
    const one = await request(url, '/documentation/endpoint?method=POST&path=' + encodeURIComponent('/events/checkin'));
    t.match(one.text, /\*\*Example request: Scan the ticket at the main-hall door: admitted\*\*/);
    t.match(one.text, /"reason": "already_checked_in"/);
    t.match(one.text, /Access: a staff token/);
    const roles = await request(url, '/documentation/tag/applications-and-api-keys.md');
    t.notMatch(roles.text, /\(role User\); roles:/, 'access in plain words');
    const ch = await request(url, '/documentation/channels.md');
    for (const ns of Object.keys(NAMESPACES) as Namespace[]) for (const ev of Object.keys(handledEvents(app.deps.config)[ns])) t.ok(ch.text.includes(`| \`${ev}\` |`), `channels.md lists ${ns} ${ev}`);
    const guide = await request(url, '/documentation.md');
    for (const h of ['## Quick start', '## Authentication and refresh', '## Paging', '## Idempotency keys', '## Rate limits', '## Limits', '## Socket channels', '## Server-sent events']) t.ok(guide.text.includes(h), h);
  });
});
