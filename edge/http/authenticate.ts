// Who the caller is, from the credentials in its headers (a bearer token, a relayed customer's
// token, or a resolver an area registered such as x-api-key), and whether the route lets it in.
import type { Principal } from '../../core/auth/tokens.js';
import { AppError } from '../../core/errors.js';
import type { AppDeps } from '../deps.js';
import type { RouteDef } from '../route.js';

export function authenticate(deps: AppDeps, def: RouteDef, headers: Record<string, string>, tenant: string): Principal | undefined {
  let principal: Principal | undefined;
  try {
    const authz = headers['authorization'];
    if (authz) {
      const m = /^Bearer\s+(\S+)\s*$/i.exec(authz);
      if (!m) throw new AppError('ERR_UNAUTHENTICATED', ['the Authorization header must be "Bearer <token>"']);
      principal = deps.tokens.verifyAccess(m[1]);
      const client = headers['x-client-authorization'];
      if (client && (principal.kind === 'app' || principal.roles.includes('System'))) {
        principal = relayedCustomer(deps, principal, client);
      }
    }
    for (const resolve of deps.credentials) {
      if (principal) break;
      principal = resolve(headers, tenant || undefined);
    }
  } catch (err) {
    // A public route still answers a caller whose token is bad; it just does so anonymously.
    if (def.auth === 'none') return undefined;
    throw err;
  }
  if (def.auth === 'none') {
    return principal && (!tenant || principal.org === tenant) ? principal : undefined;
  }
  if (!principal) throw new AppError('ERR_UNAUTHENTICATED', ['send a bearer token in the Authorization header']);
  if (tenant && principal.org !== tenant) throw new AppError('ERR_WRONG_ORG', [tenant]);
  if (def.auth === 'staff' && !(principal.kind === 'staff' && principal.roles.includes('User'))) {
    throw new AppError('ERR_FORBIDDEN', ['this route needs a staff token']);
  }
  if (def.auth === 'customer' && principal.kind === 'app') {
    throw new AppError('ERR_FORBIDDEN', ['an application token alone does not act for a customer']);
  }
  if (def.roles && def.roles.length > 0 && !def.roles.some((r) => principal!.roles.includes(r))) {
    throw new AppError('ERR_ROLE_REQUIRED', [def.roles.join(', ')]);
  }
  return principal;
}

/**
 * An application (or System service) relaying a customer's request: the customer's own token
 * rides in x-client-authorization and becomes the principal (spec: Authentication →
 * Combinations). An application token alone never acts for a customer.
 */
function relayedCustomer(deps: AppDeps, service: Principal, header: string): Principal {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!m) throw new AppError('ERR_UNAUTHENTICATED', ['x-client-authorization must be "Bearer <customer token>"']);
  const customer = deps.tokens.verifyAccess(m[1]);
  if (customer.kind !== 'customer' || customer.org !== service.org) {
    throw new AppError('ERR_UNAUTHENTICATED', ['x-client-authorization must carry a customer token of the same organisation']);
  }
  return { ...customer, app: service.sub };
}
