// Charging a request to the organisations' rate limits (edge/rate-limit.ts): by principal once it
// is known, and a refused credential as an anonymous caller.
import type uWS from 'uWebSockets.js';
import type { Principal } from '../../core/auth/tokens.js';
import type { Org } from '../../core/store/store.js';
import type { RateLimiter } from '../rate-limit.js';
import type { RouteDef } from '../route.js';

/**
 * A caller of an organisation refused from its headers (no or a bad credential) is charged as
 * anonymous, like one refused after its body; over that limit the answer is the 429.
 */
export function chargeRefused(limiter: RateLimiter | undefined, res: uWS.HttpResponse, org: Org, err: unknown): unknown {
  if (!limiter) return err;
  const ip = Buffer.from(res.getRemoteAddressAsText()).toString();
  try {
    limiter.chargeAnonymous(org.orgId, org.plan, ip);
  } catch (limited) {
    return limited;
  }
  return err;
}

/**
 * An admitted request: the route's per-address limit, then by principal (a signed-in caller spends
 * the plan, an anonymous one the organisation's anonymous bucket and its own address). Throws the 429.
 */
export function chargeRequest(limiter: RateLimiter, def: RouteDef, org: Org | undefined, principal: Principal | undefined, clientIp: () => string): void {
  if (def.rateLimit === 'address') limiter.chargeAddress(clientIp());
  if (org) {
    if (principal) limiter.charge(org.orgId, org.plan, principal);
    else limiter.chargeAnonymous(org.orgId, org.plan, clientIp());
  }
}
