// Provider webhooks: inbound SMS and call status callbacks. They carry no user token and name the
// tenant in `orgid`. The provider (or the proxy in front of us) signs each one the Standard
// Webhooks way with config `voice.webhookSecret` (inboundSignature below): a wrong or missing
// signature, or a timestamp more than five minutes away, answers 401 before the body is looked at.
// The older shared-secret header (`x-webhook-secret`) is a static bearer secret that anyone who
// once saw a request can replay forever, so it is accepted only when `voice.acceptSharedSecretHeader`
// says so. With no secret configured every webhook is refused.
//
// An inbound SMS is threaded into the inbox (channel sms, contact = sender) and, once committed,
// published as `sms.received.<tenant>` for the chat module to relay to staff sockets. A retried
// webhook with the same `sid` is recorded once.
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
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

/** The Standard Webhooks headers an inbound webhook is signed with. */
export const INBOUND_SIGNATURE_HEADERS = { id: 'webhook-id', timestamp: 'webhook-timestamp', signature: 'webhook-signature' } as const;
/** How far a signed webhook's timestamp may be from the server's clock, either way. */
export const INBOUND_TOLERANCE_SECONDS = 5 * 60;

const H = INBOUND_SIGNATURE_HEADERS;

/** What the 401 of an unsigned request tells the sender to do. */
const SIGN_IT = `sign the request: ${H.id}, ${H.timestamp} (Unix seconds) and ${H.signature} "v1,<base64 HMAC-SHA256 of id.timestamp.body>" keyed with voice.webhookSecret`;

function unauthenticated(message: string): AppError {
  return new AppError('ERR_UNAUTHENTICATED', [message]);
}

/**
 * A Standard Webhooks signature (the `standardwebhooks` package verifies the same with
 * `new Webhook(secret, { format: 'raw' })`): HMAC-SHA256 keyed with the secret's bytes over
 * `<webhook-id>.<webhook-timestamp>.<raw body>`. The signature header may hold several
 * space-separated `v1,<base64>` entries (a sender rotating its secret); one match is enough.
 */
function checkSignature(ctx: RequestContext, secret: string): void {
  const id = ctx.headers[H.id];
  const ts = ctx.headers[H.timestamp];
  const sigs = ctx.headers[H.signature]!;
  if (!id || id.length > 256 || !ts || !/^[0-9]{1,12}$/.test(ts)) {
    throw unauthenticated(`${H.id} and ${H.timestamp} (Unix seconds) must come with ${H.signature}`);
  }
  if (sigs.length > 4096) throw unauthenticated(`${H.signature} is too long`);
  const age = Math.floor(ctx.deps.clock.now() / 1000) - Number(ts);
  if (Math.abs(age) > INBOUND_TOLERANCE_SECONDS) {
    throw unauthenticated(`${H.timestamp} is more than five minutes from the server's clock: a replayed request, or a sender whose clock is off`);
  }
  const want = createHmac('sha256', Buffer.from(secret, 'utf8')).update(`${id}.${ts}.`).update(ctx.rawBody ?? Buffer.alloc(0)).digest();
  for (const entry of sigs.split(' ')) {
    const comma = entry.indexOf(',');
    if (comma < 0 || entry.slice(0, comma) !== 'v1') continue;
    const got = Buffer.from(entry.slice(comma + 1), 'base64');
    if (got.length === want.length && timingSafeEqual(got, want)) return;
  }
  throw unauthenticated(`${H.signature} does not match the body`);
}

function checkSharedHeader(ctx: RequestContext, secret: string): void {
  const got = ctx.headers[WEBHOOK_SECRET_HEADER];
  // Compare digests so the comparison takes the same time whatever the lengths.
  if (!got || !timingSafeEqual(digest(got), digest(secret))) {
    throw unauthenticated(`the ${WEBHOOK_SECRET_HEADER} header is missing or wrong; or ${SIGN_IT}`);
  }
}

/** The request is the provider's: signed, or (when the setting allows it) carrying the shared secret. */
function inboundSignature(ctx: RequestContext): void {
  const { webhookSecret: secret, acceptSharedSecretHeader } = ctx.deps.config.voice;
  if (!secret) throw unauthenticated('inbound webhooks are disabled: voice.webhookSecret is not configured');
  if (ctx.headers[H.signature] !== undefined) return checkSignature(ctx, secret);
  if (acceptSharedSecretHeader) return checkSharedHeader(ctx, secret);
  throw unauthenticated(
    `${SIGN_IT}. The ${WEBHOOK_SECRET_HEADER} header alone is accepted only with voice.acceptSharedSecretHeader (VOICE_WEBHOOK_ACCEPT_SHARED_HEADER=true)`,
  );
}

function describeBody(schema: TSchema): string {
  const props = (schema as unknown as { properties: Record<string, unknown> }).properties;
  const req = new Set((schema as unknown as { required?: string[] }).required ?? []);
  return Object.keys(props)
    .map((k) => (req.has(k) ? k : `${k}?`))
    .join(', ');
}

const AUTHENTICATED = `Signed as Standard Webhooks with \`voice.webhookSecret\`: headers \`${H.id}\`, \`${H.timestamp}\` (Unix seconds) and \`${H.signature}: v1,<base64 HMAC-SHA256 of id.timestamp.body>\` (the \`standardwebhooks\` package signs it with \`new Webhook(secret, {format: 'raw'})\`). A wrong or missing signature, or a timestamp more than five minutes from the server's clock (a replay), answers 401. The shared secret in \`${WEBHOOK_SECRET_HEADER}\` is accepted instead only when \`VOICE_WEBHOOK_ACCEPT_SHARED_HEADER\` is true.`;

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
      description: `${AUTHENTICATED} JSON body {${describeBody(SmsBody)}}. Threads the message into the inbox and emits \`sms.received\` to staff.`,
      response: Type.Object({
        received: Type.Boolean(),
        duplicate: Type.Boolean(),
        messageId: Type.String(),
        conversationId: Type.String(),
      }),
      errors: [401],
      handler: async (ctx) => {
        inboundSignature(ctx);
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
      description: `${AUTHENTICATED} JSON body {${describeBody(CallBody)}}; recording is {sid, url, durationSeconds?}. Repeated callbacks for one call SID update one record; a final status is never replaced by an earlier one arriving late.`,
      response: Type.Object({
        callId: Type.String(),
        status: Type.String(),
        recordingId: Type.Optional(Type.String()),
      }),
      errors: [401],
      handler: async (ctx) => {
        inboundSignature(ctx);
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
