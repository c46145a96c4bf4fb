// Webhook endpoints (issue 34): an Admin registers the URLs the organisation's events are sent to,
// and reads each one's deliveries. The signing and the delivery are core/webhooks/*.
import { Type } from '@sinclair/typebox';
import type { WebhooksApi } from '../../../actors/webhooks/index.js';
import { route, type RouteDef } from '../../route.js';
import { CreateBody, DeliveryPage, DeliveryParams, DeliveryQuery, DeliverySchema, EndpointParams, EndpointSchema, EndpointWithSecret, UpdateBody } from './schemas.js';

const TAG = 'Webhooks';
const ADMIN = ['Admin'];

const DELIVERY_DOC =
  'Each event is POSTed as JSON `{id, type, createdAt, orgId, data}` (`data`: the record as the API answers it, or ' +
  'the scan result for door events), signed as Standard Webhooks: headers `webhook-id` (the event id, the same on every ' +
  'attempt: de-duplicate on it), `webhook-timestamp` (seconds) and `webhook-signature: v1,<base64 HMAC-SHA256 of ' +
  '"id.timestamp.body">` keyed with the base64 part of the secret (the `standardwebhooks` libraries verify it). The ' +
  'event is queued in the same commit as the write that caused it, and sent after: at least once, a 2xx within ' +
  '`WEBHOOK_TIMEOUT_MS` (10 s) counts, anything else (a redirect too: none is followed) is retried with exponential ' +
  'back-off (`WEBHOOK_RETRY_BASE_MS` doubling up to `WEBHOOK_RETRY_MAX_MS`) until the event is `WEBHOOK_MAX_AGE_MS` (3 ' +
  'days) old. An endpoint failing without a success for `WEBHOOK_DISABLE_AFTER_MS` (5 days) is disabled and the ' +
  "organisation's Admins are emailed. Each endpoint has its own lane: a slow one never holds another's events back. " +
  'Sending yields to requests: while the node is busy (`WEBHOOK_BUSY_PERCENT`) it starts at most `WEBHOOK_BUSY_RATE` ' +
  'attempts a second and sends the rest once the rush is over, so events may arrive some seconds after their write. ';

const URL_DOC =
  'The URL must be https:// and its host must resolve to public addresses only (private, loopback and link-local ' +
  'ones are refused, 400), checked now and again before each attempt, which connects to the address checked; hosts ' +
  'in `WEBHOOK_ALLOW_HOSTS` are exempt (local development). Credentials in the URL are sent as Basic authorization ' +
  'and never shown or logged. ';

export function endpointRoutes(api: WebhooksApi): RouteDef[] {
  return [
    route({
      method: 'POST',
      path: '/webhooks/endpoints',
      auth: 'staff',
      roles: ADMIN,
      tag: TAG,
      summary: 'Register a webhook endpoint',
      description:
        'Answers the endpoint with its signing `secret` (`whsec_…`), shown this once. `events` are names of the event ' +
        'catalogue (unknown names are refused, 400), or `["*"]` for every event; `enabled` defaults to true. At most ' +
        '`WEBHOOK_MAX_ENDPOINTS` (20) endpoints per organisation (409). ' +
        URL_DOC +
        DELIVERY_DOC,
      body: CreateBody,
      response: EndpointWithSecret,
      status: 201,
      errors: [409],
      handler: (ctx) => api.create(ctx.tenant, ctx.principal!.sub, ctx.body),
    }),
    route({
      method: 'GET',
      path: '/webhooks/endpoints',
      auth: 'staff',
      roles: ADMIN,
      tag: TAG,
      summary: 'List the webhook endpoints',
      description: 'Every endpoint of the organisation, oldest first. Never a secret.',
      response: Type.Object({ data: Type.Array(EndpointSchema) }),
      handler: (ctx) => ({ data: api.list(ctx.tenant) }),
    }),
    route({
      method: 'GET',
      path: '/webhooks/endpoints/:id',
      auth: 'staff',
      roles: ADMIN,
      tag: TAG,
      summary: 'Read a webhook endpoint',
      description: 'Never its secret.',
      params: EndpointParams,
      response: EndpointSchema,
      errors: [404],
      handler: (ctx) => api.get(ctx.tenant, ctx.params.id),
    }),
    route({
      method: 'PUT',
      path: '/webhooks/endpoints/:id',
      auth: 'staff',
      roles: ADMIN,
      tag: TAG,
      summary: 'Change a webhook endpoint',
      description:
        'The fields sent change; the others stay. Enabling an endpoint the server disabled starts its failure count ' +
        'afresh; its failed deliveries are not sent again unless retried. Events written while it was disabled were ' +
        'not queued for it. ' +
        URL_DOC,
      params: EndpointParams,
      body: UpdateBody,
      response: EndpointSchema,
      errors: [404],
      handler: (ctx) => api.update(ctx.tenant, ctx.params.id, ctx.body),
    }),
    route({
      method: 'DELETE',
      path: '/webhooks/endpoints/:id',
      auth: 'staff',
      roles: ADMIN,
      tag: TAG,
      summary: 'Delete a webhook endpoint',
      description: 'With its deliveries; queued ones are not sent.',
      params: EndpointParams,
      response: Type.Object({ id: Type.String(), deleted: Type.Boolean() }),
      errors: [404],
      handler: async (ctx) => {
        await api.remove(ctx.tenant, ctx.params.id);
        return { id: ctx.params.id, deleted: true };
      },
    }),
    route({
      method: 'POST',
      path: '/webhooks/endpoints/:id/rotate-secret',
      auth: 'staff',
      roles: ADMIN,
      tag: TAG,
      summary: "Rotate an endpoint's signing secret",
      description:
        'Answers the endpoint with its new `secret`, shown this once. For 24 hours the previous secret keeps signing ' +
        'beside it (two signatures in `webhook-signature`, separated by a space), so the receiver can switch without ' +
        'dropping an event.',
      params: EndpointParams,
      response: EndpointWithSecret,
      errors: [404],
      handler: (ctx) => api.rotate(ctx.tenant, ctx.params.id),
    }),
    route({
      method: 'POST',
      path: '/webhooks/endpoints/:id/test',
      auth: 'staff',
      roles: ADMIN,
      tag: TAG,
      summary: 'Send a test event to an endpoint',
      description:
        'Queues a `ping` event (`data: {endpointId, message}`) for this endpoint alone, delivered, signed and retried ' +
        'as any event; follow it in the endpoint\'s deliveries. A disabled endpoint\'s ping fails at once.',
      params: EndpointParams,
      response: Type.Object({ deliveryId: Type.String(), eventId: Type.String() }),
      status: 202,
      errors: [404],
      handler: (ctx) => api.ping(ctx.tenant, ctx.params.id),
    }),
    route({
      method: 'GET',
      path: '/webhooks/endpoints/:id/deliveries',
      auth: 'staff',
      roles: ADMIN,
      tag: TAG,
      summary: "List an endpoint's deliveries",
      description:
        'Newest first, `limit` (default 50) at a time: send `next` back as `after` for the next page. Each delivery is ' +
        'one event for this endpoint: its state (`pending`, `delivered`, `failed`), attempts, the last status and ' +
        'duration, and when it is tried next. Deliveries are kept for `WEBHOOK_RETENTION_MS` (7 days) after their event, ' +
        'whatever their state, then deleted; a page costs the same however many the endpoint has.',
      params: EndpointParams,
      query: DeliveryQuery,
      response: DeliveryPage,
      errors: [404],
      handler: (ctx) => api.deliveries(ctx.tenant, ctx.params.id, ctx.query.after, ctx.query.limit ?? 50),
    }),
    route({
      method: 'POST',
      path: '/webhooks/deliveries/:id/retry',
      auth: 'staff',
      roles: ADMIN,
      tag: TAG,
      summary: 'Send a delivery again now',
      description:
        'Queues the delivery for an attempt now, whatever its state (a delivered one is sent again, under the same ' +
        '`webhook-id`); its attempt count goes on. Its endpoint must exist (404); a disabled endpoint\'s delivery fails at once.',
      params: DeliveryParams,
      response: DeliverySchema,
      status: 202,
      errors: [404],
      handler: (ctx) => api.retry(ctx.tenant, ctx.params.id),
    }),
  ];
}
