// Who the caller is, from the credentials in its headers (a bearer token, a relayed customer's
// token, or a resolver an area registered such as x-api-key or a scanner device's token), and
// whether the route lets it in.
import type { Principal } from '../../core/auth/tokens.js';
import { AppError } from '../../core/errors.js';
import type { AppDeps } from '../deps.js';
import type { RouteDef } from '../route.js';

const DEVICE_SCHEME = /^Device\s/i;

export function authenticate(deps: AppDeps, def: RouteDef, headers: Record<string, string>, tenant: string): Principal | undefined {
  let principal: Principal | undefined;
  try {
    const authz = headers['authorization'];
    if (authz) {
      const m = /^Bearer\s+(\S+)\s*$/i.exec(authz);
      if (m) {
        principal = deps.tokens.verifyAccess(m[1]);
        const client = headers['x-client-authorization'];
        if (client && (principal.kind === 'app' || principal.roles.includes('System'))) {
          principal = relayedCustomer(deps, principal, client);
        }
      } else if (!DEVICE_SCHEME.test(authz)) {
        // `Device <token>` is read by the device credential's resolver below.
        throw new AppError('ERR_UNAUTHENTICATED', ['the Authorization header must be "Bearer <token>" (or "Device <token>" for an enrolled scanner)']);
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
  // A scanner device's credential opens the door's routes and nothing else, public ones included:
  // a leaked device token reaches no staff or customer route.
  if (principal?.kind === 'device' && !def.device) {
    throw new AppError('ERR_FORBIDDEN', ['a scanner device credential may call only the door routes (scans, validate, its events\' tickets)']);
  }
  if (def.auth === 'none') {
    return principal && (!tenant || principal.org === tenant) ? principal : undefined;
  }
  if (!principal) throw new AppError('ERR_UNAUTHENTICATED', ['send a bearer token in the Authorization header']);
  if (tenant && principal.org !== tenant) throw new AppError('ERR_WRONG_ORG', [tenant]);
  // A device passed the route's own door check above; it holds no role.
  if (def.auth === 'staff' && principal.kind !== 'device' && !(principal.kind === 'staff' && principal.roles.includes('User'))) {
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
