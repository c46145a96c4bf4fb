// The guide a newcomer reads first: the landing view of /documentation and the head of
// /documentation.md. Markdown, so both views show the same words; the limits table is read from the
// config in force (limits.ts), so the numbers are this server's.
import type { Config } from '../../core/config.js';
import { limitsMd } from './limits.js';

export const ERROR_CASES: ReadonlyArray<readonly [string, string]> = [
  ['400', 'the request is malformed: the message lists every bad field (`body/zone must match pattern ...`), or names the missing `orgid`'],
  ['401', 'no credentials, or a token that is invalid, expired or revoked: sign in again, or refresh'],
  ['403', 'authenticated, but the token lacks the role, or belongs to another organisation'],
  ['404', 'the thing named does not exist in this organisation (or the path is not served)'],
  ['409', 'a conflict: a stale `version`, a duplicate, or an idempotency key reused with another body'],
  ['413', 'the body or the stored record is over a size limit (the message names it)'],
  ['429', 'rate limited: wait `Retry-After` seconds'],
  ['500', 'an unexpected failure; the `x-request-id` header finds it in the log'],
  ['503', 'the server is busy or a dependency is down: retry after `Retry-After` seconds'],
];

export function guideMd(config: Config, counts: string): string {
  const plan = config.rateLimits.plans[config.rateLimits.defaultPlan];
  const rate = plan ? `${plan.perSecond} requests a second with bursts of ${plan.burst}` : 'the plan of the organisation';
  return [
    '## What this is',
    '',
    `A multi-tenant business platform API: records of any kind, events and tickets with door scanning, a point of sale, reservations, live chat, CRM and more. ${counts}. Every organisation (tenant) is separate: each request names it in the \`orgid\` header.`,
    '',
    '## Quick start',
    '',
    '1. **Sign up** a sandbox organisation: `POST /profile/user/signup` with `{"email", "password", "orgName"}`. The answer carries `orgId`, an access `token` (a JWT) and a `refreshToken`. On this page, the *Sign up a sandbox organisation* button does it and fills the fields above.',
    '2. **Send the tenant and the token** on every call: `orgid: <orgId>` and `Authorization: Bearer <token>` (or `x-api-key: <key>` for an application).',
    '3. **Make a first request**: `POST /repository/create` with `{"datatype": "bm_note", "isNew": true, "data": {"title": "Call the caterer"}}` answers 201 with the stored record.',
    '',
    '```sh',
    'curl -s -X POST $BASE/profile/user/signup -H "content-type: application/json" \\',
    '  -d \'{"email":"ada@example.com","password":"correct-horse-battery","orgName":"Lovelace Events"}\'',
    'curl -s -X POST $BASE/repository/create -H "orgid: $ORGID" -H "authorization: Bearer $TOKEN" \\',
    '  -H "content-type: application/json" -d \'{"datatype":"bm_note","isNew":true,"data":{"title":"Call the caterer"}}\'',
    '```',
    '',
    '## Authentication and refresh',
    '',
    '- Staff sign in at `POST /profile/user/signin`, customers at `POST /profile/customer/signin`; both answer `{token, refreshToken, expiresIn, orgId, user}`.',
    '- The access token lives `expiresIn` seconds. Before it runs out, `POST /profile/user/refresh` with the refresh token (as the bearer token or `body.refreshToken`) answers a new pair; the old refresh token stops working, and presenting it again revokes the whole session.',
    '- Each operation says who may call it: *public*, *a customer or staff token*, or *a staff token*, sometimes with a role (Admin, ...). Applications use `x-api-key`.',
    '',
    '## Errors',
    '',
    'Every error answers one envelope: `{"statusCode": 400, "message": "body/zone must match pattern ...", "error": "Bad Request"}` (`message` is a list, one entry per failing field and at most 20, when the request fails its schema validation (400); for every other error it is one string). Each operation lists the statuses it may answer.',
    '',
    '| Status | When |',
    '|---|---|',
    ...ERROR_CASES.map(([s, m]) => `| ${s} | ${m} |`),
    '',
    '## Paging',
    '',
    `Lists take \`page\` (from 1) and \`pageSize\` (default ${config.store.defaultPageSize}, at most ${config.store.maxPageSize}) and answer \`{data, total, hasNext, page, pageSize}\`; \`POST /repository/find/{datatype}\` takes them in \`options\` with a MongoDB filter in \`query\`.`,
    '',
    '## Idempotency keys',
    '',
    'Creates and payments take an `idempotencyKey` (a UUID) in the body: a retry with the same key within 24 hours answers the first result (header `idempotent-replayed: true`) instead of doing it twice; the same key with a different body is a 409.',
    '',
    '## Rate limits',
    '',
    `Each organisation has a token bucket sized by its plan (by default ${rate}); sign-in and other anonymous authentication routes are also limited per client address. Past it a request answers 429 with \`Retry-After\` (seconds). Every answer carries \`x-request-id\`.`,
    '',
    ...limitsMd(config),
    '## Socket channels',
    '',
    'Realtime chat runs over Socket.IO v4 on two namespaces, `/chat` (customers and agents) and `/community-chat` (members). Connect with `auth: {token, orgId}`; every client event takes an ack that receives the result or `{error: {...}}`. Every event in both directions, with its payload and ack, is in the AsyncAPI 3.0 document at [/asyncapi.json](/asyncapi.json) and under *Socket channels* here.',
    '',
    '## Server-sent events',
    '',
    'An AI answer streams at `GET /ai/stream/{streamId}` as `text/event-stream`: one `data: {"index","chunk"}` event per chunk, then `event: done`; send `Last-Event-ID` to resume. The `streamId` comes with the `ai-stream` and `chat-stream` socket events.',
    '',
  ].join('\n');
}
