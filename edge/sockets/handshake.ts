// Handshake authentication of the socket channels (spec: Events). The auth object carries the
// access token and the org (`orgId`, or `orgid` as the HTTP header spells it); the token is
// verified like a bearer token and must belong to that org. An application token alone is
// refused, as on `customer` routes. A refusal reaches the client as `connect_error` with the
// reason in `message` and the status in `data`. Connections, refusals and disconnections are
// logged (info) with namespace, tenant, socket id, role and reason.
import type { Socket } from 'socket.io';
import type { OrgLookup } from '../../core/auth/org-lookup.js';
import type { Principal } from '../../core/auth/tokens.js';
import { AppError, toEnvelope } from '../../core/errors.js';
import type { Logger } from '../../core/log.js';
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
  /** When the handshake was accepted (Date.now()), for the disconnect log line. */
  connectedAt: number;
}

type Next = (err?: Error) => void;

function refuse(socket: Socket, logger: Logger, next: Next, err: unknown): void {
  const env = toEnvelope(err);
  const message = Array.isArray(env.message) ? env.message.join('; ') : env.message;
  const orgId = orgIdOf(socket.handshake.auth ?? {});
  logger.info(
    { nsp: socket.nsp.name, tenant: typeof orgId === 'string' ? orgId.slice(0, 64) : null, socketId: socket.id, transport: transportOf(socket), statusCode: env.statusCode, reason: message },
    'socket refused',
  );
  const e = new Error(message) as Error & { data?: unknown };
  e.data = env;
  next(e);
}

function transportOf(socket: Socket): string | undefined {
  return (socket.conn as unknown as { transport?: { name?: string } }).transport?.name;
}

/** The org as sent: `orgId`, or `orgid` spelled as the HTTP header. */
function orgIdOf(auth: Record<string, unknown>): unknown {
  return auth.orgId ?? auth.orgid;
}

function logFields(socket: Socket, user: SocketUser) {
  return { nsp: socket.nsp.name, tenant: user.tenant, socketId: socket.id, role: user.role, userId: user.userId };
}

/**
 * Logs the connection now; the channel's own disconnect listener calls logDisconnect (one listener
 * per socket rather than two: an idle connection holds less).
 */
export function logConnection(socket: Socket, user: SocketUser, logger: Logger): void {
  logger.info({ ...logFields(socket, user), transport: transportOf(socket) }, 'socket connected');
}

/** Logs the end of a connection with the reason socket.io gives (`transport close`, ...). */
export function logDisconnect(socket: Socket, reason: string, logger: Logger): void {
  const { user, connectedAt } = socket.data as SocketData;
  logger.info({ ...logFields(socket, user), reason, durationMs: Date.now() - connectedAt }, 'socket disconnected');
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
export function handshake(deps: Pick<AppDeps, 'tokens' | 'logger'>, orgs: Pick<OrgLookup, 'exists'>, validate: Validator) {
  return (socket: Socket, next: Next): void => {
    try {
      const auth = (socket.handshake.auth ?? {}) as Record<string, unknown>;
      if (typeof auth.token !== 'string' || auth.token === '') {
        throw new AppError('ERR_UNAUTHENTICATED', ['send the access token as auth.token']);
      }
      if (auth.orgId !== undefined && auth.orgid !== undefined && auth.orgId !== auth.orgid) {
        throw new AppError('ERR_VALIDATION', ['auth.orgId and auth.orgid differ: send one of them']);
      }
      validate(auth);
      const orgId = orgIdOf(auth) as string | undefined;
      if (orgId === undefined) throw new AppError('ERR_VALIDATION', ['payload/orgId is required (or payload/orgid, as the HTTP header spells it)']);
      const principal = deps.tokens.verifyAccess(auth.token);
      if (principal.org !== orgId) throw new AppError('ERR_WRONG_ORG', [orgId]);
      if (!orgs.exists(orgId)) throw new AppError('ERR_ORGID_INVALID', [orgId]);
      if (principal.kind === 'app') throw new AppError('ERR_FORBIDDEN', ['an application token alone does not act for a customer']);
      const user = socketUser(principal, orgId);
      // Verified: the token is not needed again, and every idle connection would keep it.
      delete auth.token;
      socket.data = { user, auth, connectedAt: Date.now() } satisfies SocketData;
      logConnection(socket, user, deps.logger);
      next();
    } catch (err) {
      refuse(socket, deps.logger, next, err);
    }
  };
}
