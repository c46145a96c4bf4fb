// Cluster mode serves socket.io on websocket only: HTTP long-polling sends each request of one
// session separately, and behind a load balancer without sticky sessions they land on different
// nodes, which do not know the session. A refused polling handshake would reach the client only
// as `xhr poll error`, so the first polling request is answered with a whole Engine.IO payload
// instead: the open packet, then a Socket.IO CONNECT_ERROR for every namespace. socket.io-client
// then raises `connect_error` whose message says what to do, and does not retry.
import { randomBytes } from 'node:crypto';
import type { Server } from 'socket.io';
import { AppError, toEnvelope } from '../../core/errors.js';
import type { Logger } from '../../core/log.js';

export const POLLING_REFUSED =
  "this server runs as a cluster and serves socket.io over websocket only: connect with io(url, { transports: ['websocket'] }) (HTTP long-polling would need sticky sessions)";

/** Engine.IO v4 packet separator in a polling payload. */
const RECORD_SEPARATOR = '\u001e';

interface EngineRequest {
  _query: Record<string, string | undefined>;
  method: string;
  headers: Record<string, string>;
}

interface EngineResponse {
  writeHead(status: number, headers: Record<string, string>): void;
  end(body: string): void;
}

/** The body answering a polling handshake: open, then CONNECT_ERROR on each namespace. */
export function refusalPayload(namespaces: readonly string[], pingInterval: number, pingTimeout: number, maxPayload: number): string {
  const open = { sid: randomBytes(15).toString('base64url'), upgrades: [], pingInterval, pingTimeout, maxPayload };
  const env = toEnvelope(new AppError('ERR_BAD_REQUEST', [POLLING_REFUSED]));
  const error = JSON.stringify({ message: POLLING_REFUSED, data: env });
  // Engine.IO message (4) carrying a Socket.IO CONNECT_ERROR (4), per namespace.
  const packets = namespaces.map((nsp) => (nsp === '/' ? `44${error}` : `44${nsp},${error}`));
  return ['0' + JSON.stringify(open), ...packets].join(RECORD_SEPARATOR);
}

/** Answers every polling handshake of `io` with the refusal on `namespaces` (cluster mode). */
export function refusePolling(io: Server, logger: Logger, namespaces: readonly string[]): void {
  const engine = io.engine as unknown as {
    use(fn: (req: EngineRequest, res: EngineResponse, next: (err?: unknown) => void) => void): void;
    opts: { pingInterval: number; pingTimeout: number; maxHttpBufferSize: number };
  };
  engine.use((req, res, next) => {
    const q = req._query;
    // Only a new session's first request; websocket upgrades and anything else pass on.
    if (q.transport !== 'polling' || q.sid !== undefined || q.EIO !== '4' || req.method !== 'GET') {
      next();
      return;
    }
    logger.info({ transport: 'polling', userAgent: req.headers['user-agent'] ?? null }, 'socket refused: polling in cluster mode');
    res.writeHead(200, { 'Content-Type': 'text/plain; charset=UTF-8', 'Cache-Control': 'no-store' });
    res.end(refusalPayload(namespaces, engine.opts.pingInterval, engine.opts.pingTimeout, engine.opts.maxHttpBufferSize));
  });
}
