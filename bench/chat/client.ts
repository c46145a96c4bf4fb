// A chat bench client process: opens socket.io-client websocket connections to /community-chat
// and, in `fanout` mode, joins each to its room (a group of ROOM_SIZE) and sends group messages
// at a fixed rate; every received message's send→receive time goes into a histogram. In `idle`
// mode the sockets only connect. Driven by its parent over IPC:
//   parent → {type:'go', rate}  {type:'measure'}  {type:'stop'}  {type:'exit'}
//   child  → {type:'ready', connected}  {type:'report', ...}
// Timestamps are performance.timeOrigin + performance.now(): wall-clock based, sub-millisecond,
// comparable across processes on one machine.
import { io, type Socket } from 'socket.io-client';
import { TokenService } from '../../core/auth/tokens.js';

const env = process.env;
const URL = env.CHAT_URL!;
const NSP = '/community-chat';
const ORG = env.CHAT_ORG ?? 'bench';
const MODE = (env.CHAT_MODE ?? 'fanout') as 'fanout' | 'idle';
const FIRST = Number(env.CHAT_FIRST ?? 0);
const COUNT = Number(env.CHAT_COUNT ?? 100);
const ROOM_SIZE = Number(env.CHAT_ROOM_SIZE ?? 10);
const SECRET = env.CHAT_JWT_SECRET ?? 'bench-secret-0123456789-0123456789-0123456789';
/** Histogram: 20 µs buckets up to 2 s. */
const BUCKET_US = 20;
const BUCKETS = 100_000;

const now = () => performance.timeOrigin + performance.now();
const tokens = new TokenService(SECRET, { accessTtlSeconds: 900, refreshTtlSeconds: 3600, cacheSize: 0 });

const sockets: Socket[] = [];
/** Each socket's room. */
const rooms: string[] = [];
let measuring = false;
let stats = { sent: 0, acked: 0, received: 0, errors: 0 };
const hist = new Uint32Array(BUCKETS + 1);
let timers: NodeJS.Timeout[] = [];
let stopped = false;

function record(sentAt: number): void {
  const us = (now() - sentAt) * 1000;
  const b = us <= 0 ? 0 : Math.min(BUCKETS, Math.floor(us / BUCKET_US));
  hist[b]++;
}

function connect(i: number): Promise<Socket> {
  const userId = `u${(FIRST + i).toString(16).padStart(6, '0')}`;
  const token = tokens.signAccess({ sub: userId, org: ORG, roles: [], kind: 'customer', email: `${userId}@bench.example.com` });
  const s = io(URL + NSP, { transports: ['websocket'], forceNew: true, reconnection: false, auth: { token, orgId: ORG }, timeout: 30_000 });
  return new Promise((resolve, reject) => {
    s.once('connect', () => resolve(s));
    s.once('connect_error', (err) => reject(err));
  });
}

async function main(): Promise<void> {
  // Connect in batches so the server sees a ramp, not a storm of 1,000 handshakes at once.
  for (let i = 0; i < COUNT; i += 50) {
    const batch = await Promise.all(Array.from({ length: Math.min(50, COUNT - i) }, (_, k) => connect(i + k)));
    sockets.push(...batch);
  }
  if (MODE === 'fanout') {
    await Promise.all(
      sockets.map((s, i) => {
        const groupId = `room-${Math.floor((FIRST + i) / ROOM_SIZE)}`;
        rooms[i] = groupId;
        s.on('groupMessage', (m: { text: string }) => {
          if (!measuring) return;
          stats.received++;
          record(Number(m.text));
        });
        return s.timeout(30_000).emitWithAck('joinGroup', { groupId });
      }),
    );
  }
  process.send!({ type: 'ready', connected: sockets.length });
}

type Ctl = { type: 'go'; rate: number } | { type: 'measure' } | { type: 'stop' } | { type: 'exit' };

function go(rate: number): void {
  const period = 1000 / rate;
  sockets.forEach((s, i) => {
    const groupId = rooms[i];
    // Spread the clients over the period so sends do not come in lockstep.
    const start = setTimeout(() => {
      const tick = setInterval(() => {
        if (stopped) return;
        if (measuring) stats.sent++;
        s.emit('sendGroupMessage', { groupId, text: String(now()) }, (r: { error?: unknown }) => {
          if (!measuring) return;
          if (r && r.error) stats.errors++;
          else stats.acked++;
        });
      }, period);
      timers.push(tick);
    }, (period * i) / sockets.length);
    timers.push(start);
  });
}

/** CPU of this client process from 'measure' on: what receiving (and sending) costs the clients. */
let cpuAtMeasure = process.cpuUsage();

process.on('message', (m: Ctl) => {
  switch (m.type) {
    case 'go':
      go(m.rate);
      break;
    case 'measure':
      stats = { sent: 0, acked: 0, received: 0, errors: 0 };
      hist.fill(0);
      cpuAtMeasure = process.cpuUsage();
      measuring = true;
      break;
    case 'stop':
      measuring = false;
      stopped = true;
      for (const t of timers) clearTimeout(t);
      timers = [];
      {
        // Sparse: [bucket, count] for the buckets that were hit.
        const sparse: Array<[number, number]> = [];
        for (let b = 0; b <= BUCKETS; b++) if (hist[b]) sparse.push([b, hist[b]]);
        const cpu = process.cpuUsage(cpuAtMeasure);
        process.send!({ type: 'report', ...stats, hist: sparse, bucketUs: BUCKET_US, cpuMicros: cpu.user + cpu.system });
      }
      break;
    case 'exit':
      for (const s of sockets) s.disconnect();
      setTimeout(() => process.exit(0), 200);
      break;
  }
});

process.on('disconnect', () => process.exit(0));

main().catch((err) => {
  process.send!({ type: 'error', message: err instanceof Error ? err.message : String(err) });
  setTimeout(() => process.exit(1), 100);
});
