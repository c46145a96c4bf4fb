// The chat baseline: plain socket.io on Node's own HTTP server doing the same fan-out as the
// edge's /community-chat groups: joinGroup puts the socket in a room, sendGroupMessage is acked
// with the message and emitted to the rest of the room (not back to the sending socket), with the
// same message shape. It does none of the edge's work: no token verification, no payload
// validation, no persistence, no presence.
// (Outside edge/ only because it is a baseline: the point is to bypass the edge.)
import { createServer } from 'node:http';
import { randomBytes } from 'node:crypto';
import { Server } from 'socket.io';

const port = Number(process.env.PORT ?? 0);
const host = process.env.HOST ?? '127.0.0.1';

const http = createServer((req, res) => {
  if (req.url === '/healthz') {
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok"}');
    return;
  }
  res.writeHead(404).end();
});

const io = new Server(http, { transports: ['websocket'], serveClient: false });
const nsp = io.of('/community-chat');
const seqs = new Map<string, number>();
const idPrefix = randomBytes(5).toString('hex');
let counter = 0;

nsp.on('connection', (socket) => {
  const userId = String((socket.handshake.auth as { token?: string }).token ?? socket.id).slice(-12);
  socket.on('joinGroup', (p: { groupId: string }, ack?: (r: unknown) => void) => {
    void socket.join(p.groupId);
    ack?.({ groupId: p.groupId, joined: true });
  });
  socket.on('sendGroupMessage', (p: { groupId: string; text: string }, ack?: (r: unknown) => void) => {
    const seq = (seqs.get(p.groupId) ?? 0) + 1;
    seqs.set(p.groupId, seq);
    const now = Date.now();
    const m = {
      id: Math.floor(now / 1000).toString(16) + idPrefix + (++counter & 0xffffff).toString(16).padStart(6, '0'),
      seq,
      threadId: `g:${p.groupId}`,
      groupId: p.groupId,
      from: { id: userId },
      text: p.text,
      at: new Date(now).toISOString(),
    };
    ack?.(m);
    socket.to(p.groupId).emit('groupMessage', m);
  });
});

http.listen(port, host, () => {
  const stop = () => {
    void io.close();
    http.close(() => process.exit(0));
    setTimeout(() => process.exit(0), 2000).unref();
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
});
