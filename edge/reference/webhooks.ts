// The webhook events as documentation: OpenAPI 3.1's `webhooks` object in /openapi.json and the
// *Webhooks* section of the guide (/documentation, /documentation.md), both read from the one
// catalogue (core/webhooks/catalogue.ts), so neither can name an event the server does not send.
import { EVENT_TYPES, WEBHOOK_EVENTS, type WebhookEventType } from '../../core/webhooks/catalogue.js';

type Json = Record<string, unknown>;

/** The Standard Webhooks headers every delivery carries. */
export const SIGNATURE_HEADERS: ReadonlyArray<readonly [string, string]> = [
  ['webhook-id', 'The event id (the payload\'s `id`): the same on every retry of one event, so a receiver drops the duplicates'],
  ['webhook-timestamp', 'When this attempt was signed, in Unix seconds: refuse one more than five minutes away'],
  ['webhook-signature', '`v1,<base64 HMAC-SHA256 of webhook-id.webhook-timestamp.body>` keyed with the endpoint\'s secret; during a rotation, one such entry per secret, space-separated'],
];

const AT = '2026-11-28T09:30:00.000Z';
const EVENT_ID = 'evt_6745f0a1c2b3d4e5f6a7b951';

/** A whole payload of `type` as delivered. */
export function examplePayload(type: WebhookEventType): Json {
  return { id: EVENT_ID, type, createdAt: AT, orgId: 'lovelace-events', data: WEBHOOK_EVENTS[type].example };
}

function plain(schema: unknown): Json {
  return JSON.parse(JSON.stringify(schema)) as Json;
}

/** OpenAPI 3.1 `webhooks`: one operation per event, its body the payload around the event's `data`. */
export function openApiWebhooks(): Json {
  const out: Json = {};
  for (const type of EVENT_TYPES) {
    const def = WEBHOOK_EVENTS[type];
    out[type] = {
      post: {
        operationId: `webhook_${type.replace(/[^A-Za-z0-9]+/g, '_')}`,
        summary: type,
        description: `${def.meaning} Delivered to every enabled endpoint subscribed to \`${type}\` or \`*\` (\`POST /webhooks/endpoints\`), signed as Standard Webhooks.`,
        // Authenticated the other way round: the receiver checks the signature headers.
        security: [],
        parameters: SIGNATURE_HEADERS.map(([name, description]) => ({ name, in: 'header', required: true, description, schema: { type: 'string' } })),
        requestBody: {
          required: true,
          content: {
            'application/json': {
              schema: {
                type: 'object',
                required: ['id', 'type', 'createdAt', 'orgId', 'data'],
                properties: {
                  id: { type: 'string', description: 'The event id, also sent as `webhook-id`' },
                  type: { type: 'string', const: type },
                  createdAt: { type: 'string', format: 'date-time', description: 'When the write that caused the event committed' },
                  orgId: { type: 'string', description: 'The organisation the event belongs to' },
                  data: plain(def.schema),
                },
              },
              example: examplePayload(type),
            },
          },
        },
        responses: {
          '2XX': { description: 'Received: any 2xx within 10 seconds counts as delivered' },
          default: { description: 'Anything else, or no answer in time: the delivery is retried with exponential back-off' },
        },
      },
    };
  }
  return out;
}

/** The guide's section on webhooks: receiving, verifying, and every event with its payload. */
export function webhooksMd(): string[] {
  return [
    '## Webhooks',
    '',
    'An Admin registers an HTTPS endpoint with `POST /webhooks/endpoints` `{"url", "events": ["order.settled", ...] or ["*"]}`; the answer shows its signing secret (`whsec_...`) once. Each event is queued in the same transaction as the write that caused it, so a committed write always yields its event and a refused one never does, and is delivered after the commit, at least once: a 2xx answer within 10 seconds counts as delivered, anything else is retried with exponential back-off (`GET /webhooks/endpoints/{id}/deliveries` shows every attempt). Events are not ordered: use `createdAt` and the record\'s `version`.',
    '',
    'Every delivery is a `POST` of `{"id", "type", "createdAt", "orgId", "data"}`, where `data` is the record as the API answers it (the scan result for door events), with these headers ([Standard Webhooks](https://www.standardwebhooks.com)):',
    '',
    '| Header | Meaning |',
    '|---|---|',
    ...SIGNATURE_HEADERS.map(([h, m]) => `| \`${h}\` | ${m} |`),
    '',
    'Verify a delivery before trusting it, against the raw body as received (not re-serialised JSON), for example with the `standardwebhooks` package:',
    '',
    '```js',
    "import { Webhook } from 'standardwebhooks';",
    "const wh = new Webhook(process.env.ENDPOINT_SECRET); // the whsec_... secret",
    '// throws unless the signature matches and the timestamp is within five minutes',
    'const event = wh.verify(rawBody, { "webhook-id": req.headers["webhook-id"], "webhook-timestamp": req.headers["webhook-timestamp"], "webhook-signature": req.headers["webhook-signature"] });',
    'if (alreadySeen(event.id)) return 200; // a retry of an event already handled',
    '```',
    '',
    'By hand: compute the HMAC-SHA256 of `<webhook-id>.<webhook-timestamp>.<body>` keyed with the base64-decoded part of the secret after `whsec_`, encode it in base64, and compare it in constant time with each `v1,` entry of `webhook-signature`.',
    '',
    'The events (each with its `data` schema and an example in `/openapi.json` under `webhooks`):',
    '',
    '| Event | When | `data` |',
    '|---|---|---|',
    ...EVENT_TYPES.map((type) => `| \`${type}\` | ${WEBHOOK_EVENTS[type].meaning} | ${shapeOf(type)} |`),
    '',
    'Inbound phone webhooks (`/phone/inbound/sms`, `/phone/inbound/call`) are verified the same way: the provider signs them with `VOICE_WEBHOOK_SECRET` as the raw key (`new Webhook(secret, {format: "raw"})`), and a timestamp more than five minutes away is refused as a replay (401).',
    '',
  ];
}

/** `data`'s shape in a few words: the record's datatype and the fields integrators read first. */
function shapeOf(type: WebhookEventType): string {
  const s = WEBHOOK_EVENTS[type].schema as { properties?: Record<string, { const?: string; properties?: Record<string, unknown> }> };
  const props = s.properties ?? {};
  const datatype = props.datatype?.const;
  if (datatype) return `a \`${datatype}\` record: ${Object.keys(props.data?.properties ?? {}).slice(0, 6).map((k) => `\`${k}\``).join(', ')}`;
  return `{${Object.keys(props).map((k) => `\`${k}\``).join(', ')}}`;
}
