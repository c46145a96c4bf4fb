// Provider webhooks: inbound SMS and call status callbacks. They carry no user token; the
// provider (or the proxy in front of us) sends the shared secret from config `voice.webhookSecret`
// in the `x-webhook-secret` header, and the tenant in `orgid`. A missing or wrong secret answers
// 401 before the body is even looked at; with no secret configured every webhook is refused.
//
// An inbound SMS is threaded into the inbox (channel sms, contact = sender) and, once committed,
// published as `sms.received.<tenant>` for the chat module to relay to staff sockets. A retried
// webhook with the same `sid` is recorded once.
import { createHash, timingSafeEqual } from 'node:crypto';
import { Type, type TSchema } from '@sinclair/typebox';
import { normalizeContact, normalizePhone, type InboxApi } from '../../../actors/inbox/index.js';
import { CALL_STATUSES, type CallEvent, type PhoneApi } from '../../../actors/phone/index.js';
import { AppError } from '../../../core/errors.js';
import { compileRoute } from '../../compile.js';
import { route, type RequestContext, type RouteDef } from '../../route.js';
import { Enum } from '../crm/schemas.js';
import { WEBHOOK_SECRET_HEADER } from './voice.js';

const TAG = 'Phone';

const SmsBody = Type.Object({
  from: Type.String({ minLength: 3, maxLength: 32, description: "Sender's number" }),
  to: Type.String({ minLength: 3, maxLength: 32, description: 'Our number' }),
  body: Type.String({ maxLength: 20_000 }),
  sid: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: "Provider's message SID (deduplicates retries)" })),
  receivedAt: Type.Optional(Type.String({ format: 'date-time' })),
  media: Type.Optional(Type.Array(Type.String({ maxLength: 2000 }), { maxItems: 10 })),
});

const CallBody = Type.Object({
  sid: Type.String({ minLength: 1, maxLength: 64, description: "Provider's call SID" }),
  from: Type.String({ minLength: 1, maxLength: 64 }),
  to: Type.String({ minLength: 1, maxLength: 64 }),
  status: Enum(CALL_STATUSES),
  direction: Type.Optional(Enum(['inbound', 'outbound'])),
  durationSeconds: Type.Optional(Type.Integer({ minimum: 0 })),
  startedAt: Type.Optional(Type.String({ format: 'date-time' })),
  endedAt: Type.Optional(Type.String({ format: 'date-time' })),
  recording: Type.Optional(
    Type.Object({
      sid: Type.String({ minLength: 1, maxLength: 64 }),
      url: Type.String({ minLength: 1, maxLength: 2000 }),
      durationSeconds: Type.Optional(Type.Integer({ minimum: 0 })),
    }),
  ),
});

/** The body validator the edge would build, run only after the secret is checked. */
function bodyValidator<T extends TSchema>(schema: T): (v: unknown) => void {
  const compiled = compileRoute({ body: schema } as unknown as RouteDef);
  return (value) => void compiled.body!(value ?? {});
}

function digest(s: string): Buffer {
  return createHash('sha256').update(s).digest();
}

function checkSecret(ctx: RequestContext): void {
  const want = ctx.deps.config.voice.webhookSecret;
  if (!want) throw new AppError('ERR_UNAUTHENTICATED', ['inbound webhooks are disabled: voice.webhookSecret is not configured']);
  const got = ctx.headers[WEBHOOK_SECRET_HEADER];
  // Compare digests so the comparison takes the same time whatever the lengths.
  if (!got || !timingSafeEqual(digest(got), digest(want))) {
    throw new AppError('ERR_UNAUTHENTICATED', [`the ${WEBHOOK_SECRET_HEADER} header is missing or wrong`]);
  }
}

function describeBody(schema: TSchema): string {
  const props = (schema as unknown as { properties: Record<string, unknown> }).properties;
  const req = new Set((schema as unknown as { required?: string[] }).required ?? []);
  return Object.keys(props)
    .map((k) => (req.has(k) ? k : `${k}?`))
    .join(', ');
}

export function inboundRoutes(phone: PhoneApi, inbox: InboxApi): RouteDef[] {
  const validSms = bodyValidator(SmsBody);
  const validCall = bodyValidator(CallBody);
  return [
    route({
      method: 'POST',
      path: '/phone/inbound/sms',
      auth: 'none',
      tag: TAG,
      summary: 'Provider webhook: an SMS arrived',
      description: `Authenticated by the shared secret in \`${WEBHOOK_SECRET_HEADER}\` (401 otherwise). JSON body {${describeBody(SmsBody)}}. Threads the message into the inbox and emits \`sms.received\` to staff.`,
      response: Type.Object({
        received: Type.Boolean(),
        duplicate: Type.Boolean(),
        messageId: Type.String(),
        conversationId: Type.String(),
      }),
      errors: [401],
      handler: async (ctx) => {
        checkSecret(ctx);
        validSms(ctx.body);
        const b = ctx.body as { from: string; to: string; body: string; sid?: string; receivedAt?: string; media?: string[] };
        const r = await inbox.receive(ctx.tenant, {
          channel: 'sms',
          contact: normalizeContact('sms', b.from, 'body/from'),
          address: normalizePhone(b.to) ?? b.to.trim(),
          body: b.body,
          externalId: b.sid,
          at: b.receivedAt,
          ...(b.media?.length ? { meta: { media: b.media } } : {}),
        });
        return { received: true, duplicate: Boolean(r.duplicate), messageId: r.message!.sk, conversationId: r.conversationId };
      },
    }),
    route({
      method: 'POST',
      path: '/phone/inbound/call',
      auth: 'none',
      tag: TAG,
      summary: 'Provider webhook: a call started, changed status or ended (optionally with its recording)',
      description: `Authenticated by the shared secret in \`${WEBHOOK_SECRET_HEADER}\` (401 otherwise). JSON body {${describeBody(CallBody)}}; recording is {sid, url, durationSeconds?}. Repeated callbacks for one call SID update one record; a final status is never replaced by an earlier one arriving late.`,
      response: Type.Object({
        callId: Type.String(),
        status: Type.String(),
        recordingId: Type.Optional(Type.String()),
      }),
      errors: [401],
      handler: async (ctx) => {
        checkSecret(ctx);
        validCall(ctx.body);
        const b = ctx.body as Omit<CallEvent, 'direction'> & { direction?: 'inbound' | 'outbound' };
        const ev: CallEvent = {
          ...b,
          direction: b.direction ?? 'inbound',
          from: normalizePhone(b.from) ?? b.from.trim(),
          to: normalizePhone(b.to) ?? b.to.trim(),
        };
        const r = await phone.callEvent(ctx.tenant, ev);
        return { callId: r.call.sk, status: String(r.call.data.status), ...(r.recording ? { recordingId: r.recording.sk } : {}) };
      },
    }),
  ];
}
