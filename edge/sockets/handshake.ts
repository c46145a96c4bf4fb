// Handshake authentication of the socket channels (spec: Events). The auth object carries the
// access token and the org; the token is verified like a bearer token and must belong to that org.
// An application token alone is refused, as on `customer` routes. A refusal reaches the client as
// `connect_error` with the reason in `message` and the status in `data`.
import type { Socket } from 'socket.io';
import type { Principal } from '../../core/auth/tokens.js';
import { AppError, toEnvelope } from '../../core/errors.js';
import type { AppDeps } from '../deps.js';
import type { Validator } from './schemas.js';

export interface SocketUser {
  principal: Principal;
  tenant: string;
  userId: string;
  /** Staff tokens (role User) act as agents; everyone else as a customer. */
  role: 'agent' | 'customer';
  email: string | null;
  name: string | null;
}

export interface SocketData {
  user: SocketUser;
  auth: Record<string, unknown>;
}

type Next = (err?: Error) => void;

function refuse(next: Next, err: unknown): void {
  const env = toEnvelope(err);
  const message = Array.isArray(env.message) ? env.message.join('; ') : env.message;
  const e = new Error(message) as Error & { data?: unknown };
  e.data = env;
  next(e);
}

export function socketUser(principal: Principal, tenant: string): SocketUser {
  const staff = principal.kind === 'staff' && principal.roles.includes('User');
  const name = (principal as Principal & { name?: unknown }).name;
  return {
    principal,
    tenant,
    userId: principal.sub,
    role: staff ? 'agent' : 'customer',
    email: principal.email?.toLowerCase() ?? null,
    name: typeof name === 'string' ? name : null,
  };
}

/** The namespace middleware: validates the auth object, verifies the token, fills socket.data. */
export function handshake(deps: AppDeps, validate: Validator) {
  return (socket: Socket, next: Next): void => {
    try {
      const auth = (socket.handshake.auth ?? {}) as Record<string, unknown>;
      if (typeof auth.token !== 'string' || auth.token === '') {
        throw new AppError('ERR_UNAUTHENTICATED', ['send the access token as auth.token']);
      }
      validate(auth);
      const principal = deps.tokens.verifyAccess(auth.token);
      const orgId = auth.orgId as string;
      if (principal.org !== orgId) throw new AppError('ERR_WRONG_ORG', [orgId]);
      if (!deps.store.getOrg(orgId)) throw new AppError('ERR_ORGID_INVALID', [orgId]);
      if (principal.kind === 'app') throw new AppError('ERR_FORBIDDEN', ['an application token alone does not act for a customer']);
      socket.data = { user: socketUser(principal, orgId), auth } satisfies SocketData;
      next();
    } catch (err) {
      refuse(next, err);
    }
  };
}
