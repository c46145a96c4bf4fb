// Who may use a storefront route, and what its answer shows them.
//
// Two modes per organisation, chosen by `posRequiresStaffToken`:
// - closed (true; where an organisation created by sign-up starts): every tab, order, payment,
//   receipt, print, send, service-point status and terminal route, reads included, needs a staff
//   token or an application token (a customer relayed by an application counts as the
//   application). No token: 401; a customer's own token: 403. The catalogue, the payment gateways
//   and customer card intents stay open.
// - open (false; the spec's mode, and that of organisations created before the default): anyone
//   who knows the orgid.
// In both, an answer shows an order's personal data (the guest's email, phone, address, customer
// id) only to staff or to the order's own customer: an anonymous, application or other customer's
// caller gets the order without them (actors/storefront/privacy.ts).
import { appError } from '../../../core/errors.js';
import type { Principal } from '../../../core/auth/tokens.js';
import { isOrderRecord, withoutPersonalData, type StorefrontApi } from '../../../actors/storefront/index.js';
import type { RequestContext, RouteDef } from '../../route.js';

export function isStaff(p: Principal | undefined): boolean {
  return p?.kind === 'staff' && p.roles.includes('User');
}

/** An application's token, alone or relaying a customer's (x-client-authorization). */
export function isApplication(p: Principal | undefined): boolean {
  return p?.kind === 'app' || (p?.kind === 'customer' && !!p.app);
}

/** The customer a customer token (own, or relayed by an application) speaks for. */
export function customerOf(p: Principal | undefined): string | undefined {
  return p?.kind === 'customer' ? (p.customerId ?? p.sub) : undefined;
}

const REASON = 'this organisation keeps its storefront closed (posRequiresStaffToken): send a staff or an application token';

/** The closed storefront's check: staff or application; otherwise 401 without a token, 403 with another. */
export function requireStaffOrAppIfClosed(sf: Pick<StorefrontApi, 'closed'>, caller: { tenant: string; principal: Principal | undefined }): void {
  if (!sf.closed(caller.tenant)) return;
  const p = caller.principal;
  if (!p) throw appError('ERR_UNAUTHENTICATED', REASON);
  if (!isStaff(p) && !isApplication(p)) throw appError('ERR_FORBIDDEN', REASON);
}

/** The answer as this caller may see it: orders lose their personal data unless staff or their own customer asks. */
export function shownTo(p: Principal | undefined, value: unknown): unknown {
  if (isStaff(p)) return value;
  return strip(value, customerOf(p), 0);
}

function strip(v: unknown, own: string | undefined, depth: number): unknown {
  if (!v || typeof v !== 'object' || depth > 4) return v;
  if (Array.isArray(v)) return v.map((x) => strip(x, own, depth + 1));
  if (isOrderRecord(v)) return own !== undefined && v.data.customerId === own ? v : withoutPersonalData(v);
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) out[k] = strip(x, own, depth + 1);
  return out;
}

const MODES =
  ' **Access.** Closed storefront (`posRequiresStaffToken` true, where an organisation created by sign-up starts): a staff or an ' +
  'application token (401 without a token, 403 with a customer token alone). Open storefront (the spec\'s mode, chosen at sign-up ' +
  'with `openStorefront: true` or by an Admin at `PUT /storefront/settings`): anyone who knows the orgid. In both modes an order in ' +
  "the answer carries the guest's email, phone, address and customer id only for staff or the order's own customer; anyone else " +
  "sees the guest's name and none of those.";

export type PosRoute = (def: RouteDef, note?: string) => RouteDef;

/** Makes storefront routes of the POS: behind the closed-storefront check, their answer shown as the caller may see it. */
export function posRouteOf(sf: Pick<StorefrontApi, 'closed'>): PosRoute {
  const guard = (caller: { tenant: string; principal: Principal | undefined }) => requireStaffOrAppIfClosed(sf, caller);
  return (def, note = '') => {
    const handler = def.handler;
    return {
      ...def,
      description: (def.description ?? def.summary) + note + MODES,
      guard,
      handler: async (ctx: RequestContext) => {
        guard(ctx);
        return shownTo(ctx.principal, await handler(ctx));
      },
    };
  };
}
