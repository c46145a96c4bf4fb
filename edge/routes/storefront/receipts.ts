// Receipts and checks: printer-ready payloads, print jobs and sent receipts. A print job or a sent
// receipt is a message in the outbox (kind `print`, `email` or `sms`) carrying the payload, and its
// text rendering as the body.
import { Type } from '@sinclair/typebox';
import { appError } from '../../../core/errors.js';
import type { OutboxMessage } from '../../../core/outbox.js';
import { formatMinor } from '../../../actors/storefront/index.js';
import { receiptText, type Copy, type PayloadKind, type StorefrontApi } from '../../../actors/storefront/index.js';
import { route, type RequestContext, type RouteDef } from '../../route.js';
import { FreeObject, IdParam, TAG } from './common.js';
import { isStaff, posRouteOf, type PosRoute } from './access.js';

const CopyEnum = Type.Unsafe<Copy>({ type: 'string', enum: ['customer', 'merchant'], description: 'Which copy (default customer)' });

const Queued = Type.Object({ id: Type.String(), channel: Type.String(), to: Type.String(), kind: Type.String(), provider: Type.String() });

/** Queues the message in the outbox (core/outbox.ts): stored now, handed to the provider by the dispatcher. */
async function queue(sf: StorefrontApi, tenant: string, msg: OutboxMessage) {
  const sent = await sf.queueReceipt(tenant, msg);
  return { id: sent.id, channel: sent.channel, to: sent.to, kind: sent.kind ?? '', provider: sent.provider };
}

function payloadRoute(sf: StorefrontApi, posRoute: PosRoute, kind: PayloadKind): RouteDef {
  return posRoute(route({
    method: 'GET',
    path: `/storefront/pos/tab/:id/${kind}-payload`,
    auth: 'none',
    tag: TAG,
    summary: kind === 'receipt' ? 'A printer-ready receipt' : 'A printer-ready check (the bill before payment)',
    description:
      'Structured: business and location header, order (number, label, point, times), lines with modifiers, subtotal, tax, ' +
      'tip, total, payments, change, balance due, footer, the copy name (`copy=customer` or `copy=merchant`; the merchant copy ' +
      'adds processor references and a signature line for card payments)' +
      (kind === 'check' ? ', and suggested tips (15, 18, 20 % of the subtotal).' : '.'),
    params: IdParam,
    query: Type.Object({ copy: Type.Optional(CopyEnum) }),
    response: FreeObject,
    errors: [404],
    handler: (ctx) => sf.receiptPayload(ctx.tenant, ctx.params.id, kind, ctx.query.copy ?? 'customer').payload,
  }));
}

function printRoute(sf: StorefrontApi, posRoute: PosRoute, kind: PayloadKind): RouteDef {
  return posRoute(
    route({
      method: 'POST',
      path: `/storefront/pos/tab/:id/print-${kind}`,
      auth: 'none',
      tag: TAG,
      summary: kind === 'receipt' ? 'Queue a receipt print job' : 'Queue a check print job',
      description:
        `Queues a print job (outbox channel \`print\`, kind \`${kind}\`) carrying the ${kind} payload and its text. The printer is ` +
        '`printerId`, else the location\'s `data.receiptPrinterId`, else `default`.',
      params: IdParam,
      body: Type.Object({ copy: Type.Optional(CopyEnum), printerId: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })) }),
      status: 202,
      response: Type.Object({ queued: Queued, payload: FreeObject }),
      errors: [404],
      handler: async (ctx) => {
        const { payload, exponent } = sf.receiptPayload(ctx.tenant, ctx.params.id, kind, ctx.body.copy ?? 'customer');
        const loc = sf.location(ctx.tenant, payload.location.businessLocationId);
        const to = ctx.body.printerId ?? (typeof loc?.data.receiptPrinterId === 'string' ? loc.data.receiptPrinterId : 'default');
        const queued = await queue(sf, ctx.tenant, {
          channel: 'print',
          to,
          kind,
          subject: `${kind === 'receipt' ? 'Receipt' : 'Check'} #${payload.order.orderNumber} (${payload.copyLabel})`,
          body: receiptText(payload, exponent),
          payload: payload as unknown as Record<string, unknown>,
        });
        return { queued, payload };
      },
    }),
  );
}

const EMAIL = /^[^@\s]+@[^@\s]+\.[^@\s]+$/;
const PHONE = /^\+?[0-9 ()-]{6,20}$/;
const normalEmail = (v: string) => v.trim().toLowerCase();
const normalPhone = (v: string) => v.replace(/[ ()-]/g, '');

/**
 * Where a receipt goes. Staff: the body's address and number, else the order's contact. Anyone
 * else: the order's contact only; a body naming another is refused before anything is queued.
 */
function recipients(
  sf: StorefrontApi,
  ctx: RequestContext<unknown, unknown, { email?: string; phone?: string }>,
  staff: boolean,
): { email?: string; phone?: string } {
  const onOrder = sf.orderContact(ctx.tenant, (ctx.params as { id: string }).id);
  const body = ctx.body ?? {};
  // A contact typed at the till is not checked there: one that is no address or number is not used.
  const contact = {
    email: onOrder.email && EMAIL.test(onOrder.email.trim()) ? normalEmail(onOrder.email) : undefined,
    phone: onOrder.phone && PHONE.test(onOrder.phone.trim()) ? normalPhone(onOrder.phone) : undefined,
  };
  const asked = { email: body.email && normalEmail(body.email), phone: body.phone && normalPhone(body.phone) };
  let out: { email?: string; phone?: string };
  if (staff && (asked.email || asked.phone)) out = asked;
  else if (!asked.email && !asked.phone) out = contact;
  else {
    if ((asked.email && asked.email !== contact.email) || (asked.phone && asked.phone !== contact.phone)) {
      throw appError('ERR_FORBIDDEN', "without a staff token a receipt goes only to the contact already on the order; leave body/email and body/phone out to use it");
    }
    out = asked;
  }
  if (!out.email && !out.phone) throw appError('ERR_VALIDATION', 'the order has no contact: send body/email or body/phone (a staff token may name any)');
  return out;
}

/** `grace@example.com` → `g***@example.com`; `+15550001111` → `*******1111`. */
function masked(to: string): string {
  const at = to.indexOf('@');
  if (at > 0) return `${to[0]}***${to.slice(at)}`;
  return to.length > 4 ? '*'.repeat(to.length - 4) + to.slice(-4) : '****';
}

export function receiptRoutes(sf: StorefrontApi): RouteDef[] {
  const posRoute = posRouteOf(sf);
  return [
    payloadRoute(sf, posRoute, 'receipt'),
    payloadRoute(sf, posRoute, 'check'),
    printRoute(sf, posRoute, 'check'),
    printRoute(sf, posRoute, 'receipt'),
    posRoute(
      route({
        method: 'POST',
        path: '/storefront/pos/tab/:id/send-receipt',
        auth: 'none',
        tag: TAG,
        summary: 'Send the receipt by email or text message',
        description:
          'The email carries the full receipt; the text message a short summary. Both go through the outbox. A staff token may send ' +
          "to any `email` and/or `phone`; without either, to the contact on the order (the guest's `customer.email` and " +
          '`customer.phone`). Anyone else (no token, an application token, a customer token) sends only to the contact already on ' +
          'the order: leave `email` and `phone` out (both of the contact are used) or repeat them; another address or number is ' +
          "refused (403) and nothing is sent, so a stranger cannot mail a guest's receipt, or anything at all, to an address of " +
          'their choosing. An order with no contact answers 400. The answer names the recipient in full only to staff (masked ' +
          'otherwise, e.g. `g***@example.com`).',
        params: IdParam,
        body: Type.Object({
          email: Type.Optional(Type.String({ format: 'email', maxLength: 254 })),
          phone: Type.Optional(Type.String({ pattern: '^\\+?[0-9 ()-]{6,20}$', description: 'E.164 preferred' })),
          copy: Type.Optional(CopyEnum),
        }),
        status: 202,
        response: Type.Object({ queued: Type.Array(Queued) }),
        errors: [403, 404],
        handler: async (ctx) => {
          const staff = isStaff(ctx.principal);
          const { email, phone } = recipients(sf, ctx, staff);
          const { payload, exponent } = sf.receiptPayload(ctx.tenant, ctx.params.id, 'receipt', ctx.body.copy ?? 'customer');
          const title = `Receipt for order #${payload.order.orderNumber} at ${payload.business.name}`;
          const queued = [];
          if (email) {
            queued.push(
              await queue(sf, ctx.tenant, {
                channel: 'email',
                to: email,
                kind: 'receipt',
                subject: title,
                body: receiptText(payload, exponent),
                payload: payload as unknown as Record<string, unknown>,
              }),
            );
          }
          if (phone) {
            const total = formatMinor(Math.round(payload.total * 10 ** exponent), exponent);
            queued.push(
              await queue(sf, ctx.tenant, {
                channel: 'sms',
                to: phone,
                kind: 'receipt',
                body: `${title}: total ${total} ${payload.currency}. ${payload.footer}`.slice(0, 320),
                payload: payload as unknown as Record<string, unknown>,
              }),
            );
          }
          if (!staff) return { queued: queued.map((q) => ({ ...q, to: masked(q.to) })) };
          return { queued };
        },
      }),
    ),
  ];
}
