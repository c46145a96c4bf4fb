// What an append to the commit stream costs nats-server, by how its reply subject and fence are
// sent (issue 35: the cluster's CPU per scan counts nats-server's). Four lanes (tenants) append
// 1,000-byte messages to one file-stored stream, one append in flight per lane as a node's lanes
// do, and the bench reads nats-server's CPU per append from /proc. Variants, in alternating rounds:
//   unique   a new reply subject per append, with the expected-last-subject-sequence fence (how
//            StreamAppends replied before its reply subjects were reused)
//   reused   the same appends with reply subjects reused once acknowledged (StreamAppends now)
//   appends  the real StreamAppends class
//   unfenced reused reply subjects without the fence: what the per-subject check itself costs
//            (nats-server loads and checksums the subject's last message for it)
// Run: npx tsx bench/store/append-replies.ts   (knobs: APPENDS per round (20000), ROUNDS (3), BYTES (1000))
import { connect, headers, type NatsConnection } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { StreamAppends } from '../../core/cluster/stream-appends.js';
import { cpuOf } from '../harness.js';
import { startNats } from '../scenarios/cluster.js';
import { envInt } from '../scenario.js';

type Variant = 'unique' | 'reused' | 'appends' | 'unfenced';
const VARIANTS: Variant[] = ['unique', 'reused', 'appends', 'unfenced'];
const LANES = 4;

/** Appends `n` messages per lane with raw publishes (unique or reused reply subjects, fenced or not). */
async function raw(nc: NatsConnection, subject: (lane: number) => string, data: Uint8Array, n: number, reuse: boolean, fence: boolean): Promise<void> {
  const inbox = `_INBOX.bench${Math.random().toString(36).slice(2)}`;
  const waiting = new Map<string, (seq: number) => void>();
  const sub = nc.subscribe(`${inbox}.*`, {
    callback: (err, m) => {
      if (err) return;
      const r = waiting.get(m.subject);
      waiting.delete(m.subject);
      r?.((JSON.parse(new TextDecoder().decode(m.data)) as { seq: number }).seq);
    },
  });
  let id = 0;
  const last: number[] = [];
  await Promise.all(
    Array.from({ length: LANES }, async (_, lane) => {
      for (let i = 0; i < n; i++) {
        const reply = `${inbox}.${reuse ? lane : ++id}`;
        const opts: { reply: string; headers?: ReturnType<typeof headers> } = { reply };
        if (fence && last[lane] !== undefined) {
          const h = headers();
          h.set('Nats-Expected-Last-Subject-Sequence', String(last[lane]));
          opts.headers = h;
        }
        const acked = new Promise<number>((r) => waiting.set(reply, r));
        nc.publish(subject(lane), data, opts);
        last[lane] = await acked;
      }
    }),
  );
  sub.unsubscribe();
}

async function viaAppends(nc: NatsConnection, subject: (lane: number) => string, data: Uint8Array, n: number): Promise<void> {
  const appends = new StreamAppends(nc, 10_000);
  await Promise.all(
    Array.from({ length: LANES }, async (_, lane) => {
      let last: number | undefined;
      for (let i = 0; i < n; i++) last = await appends.append(subject(lane), data, last);
    }),
  );
  appends.close();
}

const appendsPerRound = envInt('APPENDS', 20_000);
const rounds = envInt('ROUNDS', 3);
const data = new Uint8Array(envInt('BYTES', 1000)).fill(65);
const perLane = Math.ceil(appendsPerRound / LANES);
const results = new Map<Variant, number[]>(VARIANTS.map((v) => [v, []]));
for (let round = 0; round < rounds; round++) {
  for (const variant of round % 2 === 0 ? VARIANTS : [...VARIANTS].reverse()) {
    // A fresh server and stream per run: every variant starts from an empty store.
    const nats = await startNats();
    const nc = await connect({ servers: nats.url });
    try {
      const jsm = await jetstreamManager(nc);
      await jsm.streams.add({ name: 'AR', subjects: ['ar.>'], storage: 'file', discard: 'old' });
      // Each lane's subject takes a fresh name per run (the fence's first append expects nothing).
      const subject = (lane: number) => `ar.t.${variant}-${lane}`;
      const run = (n: number) =>
        variant === 'appends' ? viaAppends(nc, subject, data, n) : raw(nc, subject, data, n, variant !== 'unique', variant !== 'unfenced');
      await run(Math.ceil(perLane / 10)); // warm-up
      const c0 = cpuOf(nats.pid);
      await run(perLane);
      const micros = ((cpuOf(nats.pid) - c0) * 1e6) / (perLane * LANES);
      results.get(variant)!.push(micros);
      console.log(`  round ${round + 1}: ${variant.padEnd(8)} ${micros.toFixed(1)} µs of nats-server CPU an append`);
    } finally {
      await nc.close();
      await nats.stop();
    }
  }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
console.log(`\n${LANES} lanes, ${data.length}-byte appends, ${rounds} rounds of ${perLane * LANES}: median µs of nats-server CPU an append`);
for (const v of VARIANTS) console.log(`  ${v.padEnd(8)} ${median(results.get(v)!).toFixed(1)}   (${results.get(v)!.map((x) => x.toFixed(1)).join(' / ')})`);
