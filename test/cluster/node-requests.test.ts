// Requests between nodes, folded (core/cluster/node-requests.ts), over a real nats-server: what
// one node sends another in a turn travels as one message each way, every frame still gets its
// own answer, and a frame that cannot be answered ends as gone, lost or timed out, never hangs.
import t from 'tap';
import type { NatsConnection } from '@nats-io/transport-node';
import { decode, encode } from '../../core/cluster/codec.js';
import { ClusterNames } from '../../core/cluster/names.js';
import { NodeRequests } from '../../core/cluster/node-requests.js';
import { silentLogger } from '../../core/log.js';
import { natsClients, startNatsServer } from '../helpers/nats-server.js';

const nats = await startNatsServer();
t.teardown(() => nats.stop());

const names = new ClusterNames('nr');
const conn = natsClients(t, nats);

function requests(nc: NatsConnection, opts: { timeoutMs?: number; isLive?: (n: string) => boolean; lingerMs?: number } = {}): NodeRequests {
  const r = new NodeRequests({ nc, names, logger: silentLogger, timeoutMs: opts.timeoutMs ?? 5000, isLive: opts.isLive ?? (() => true), lingerMs: opts.lingerMs });
  t.teardown(() => r.close());
  return r;
}

/** Counts the messages published on `subject`, seen from a connection of its own. */
async function counter(subject: string): Promise<{ count: () => Promise<number> }> {
  const nc = await conn();
  let n = 0;
  nc.subscribe(subject, { callback: () => void n++ });
  await nc.flush();
  // After a round trip of its own, every message routed to it before has arrived.
  return { count: async () => (await nc.flush(), n) };
}

t.test('node requests - twenty frames sent to one node in one turn travel as one message each way, each with its own answer', async (t) => {
  const asker = requests(await conn());
  const ownerNc = await conn();
  const owner = requests(ownerNc);
  owner.serve('b', 'http', async (frame) => encode({ echo: decode<{ n: number }>(frame).n * 2 }));
  await ownerNc.flush();
  const sent = await counter(names.nodeSubject('b', 'http'));
  const answers = await counter('_INBOX.>');
  const outcomes = await Promise.all(Array.from({ length: 20 }, (_, n) => asker.send('b', 'http', encode({ n }))));
  t.same(
    outcomes.map((o) => (o.kind === 'answer' ? decode<{ echo: number }>(o.frame).echo : o.kind)),
    Array.from({ length: 20 }, (_, n) => n * 2),
    'every frame is answered with its own answer',
  );
  t.equal(await sent.count(), 1, 'the twenty requests went as one message');
  t.equal(await answers.count(), 1, 'and their answers came back as one');
});

t.test('node requests - frames sent in separate turns, and a batch over the payload limit, go as several messages', async (t) => {
  const ownerNc = await conn();
  const owner = requests(ownerNc);
  owner.serve('c', 'ask', async (frame) => frame);
  await ownerNc.flush();
  const asker = requests(await conn());
  const sent = await counter(names.nodeSubject('c', 'ask'));
  const first = await asker.send('c', 'ask', encode('one'));
  const second = await asker.send('c', 'ask', encode('two'));
  t.same([first, second].map((o) => (o.kind === 'answer' ? decode(o.frame) : o.kind)), ['one', 'two']);
  const big = new Uint8Array(Math.floor(asker.maxFrame * 0.6));
  const outcomes = await Promise.all([asker.send('c', 'ask', big), asker.send('c', 'ask', big)]);
  t.same(
    outcomes.map((o) => (o.kind === 'answer' ? o.frame.length : o.kind)),
    [big.length, big.length],
    'two frames that do not fit one message both arrive whole',
  );
  t.equal(await sent.count(), 4, 'one message per turn, and the oversize batch split in two');
});

t.test('node requests - in a burst, requests sent in separate turns wait for the linger and travel as one message; a lone request never waits', async (t) => {
  const ownerNc = await conn();
  const owner = requests(ownerNc);
  owner.serve('e', 'http', async (frame) => frame);
  await ownerNc.flush();
  const asker = requests(await conn(), { lingerMs: 1000 });
  const sent = await counter(names.nodeSubject('e', 'http'));
  const t0 = performance.now();
  const lone = asker.send('e', 'http', encode('lone')).then((o) => ({ o, ms: performance.now() - t0 }));
  // Five more, each in a turn of its own, right after the lone one left: a burst.
  const burst: Array<Promise<{ o: Awaited<ReturnType<NodeRequests['send']>>; ms: number }>> = [];
  for (let i = 0; i < 5; i++) {
    await new Promise((r) => setImmediate(r));
    burst.push(asker.send('e', 'http', encode(i)).then((o) => ({ o, ms: performance.now() - t0 })));
  }
  const first = await lone;
  const rest = await Promise.all(burst);
  t.same([first, ...rest].map((x) => (x.o.kind === 'answer' ? decode(x.o.frame) : x.o.kind)), ['lone', 0, 1, 2, 3, 4], 'each has its own answer');
  t.ok(first.ms < 800, `the lone request went at once (answered after ${first.ms.toFixed(0)} ms)`);
  t.ok(Math.min(...rest.map((x) => x.ms)) >= 900, 'the burst waited for the linger');
  t.equal(await sent.count(), 2, 'the lone request as one message, the five of the burst as another');
});

t.test('node requests - frames for a node nobody serves are gone at once: never delivered, safe to send elsewhere', async (t) => {
  const asker = requests(await conn(), { timeoutMs: 10_000 });
  const started = Date.now();
  const outcomes = await Promise.all([asker.send('nobody', 'commit', encode(1)), asker.send('nobody', 'commit', encode(2))]);
  t.same(outcomes.map((o) => o.kind), ['gone', 'gone']);
  t.ok(Date.now() - started < 5000, 'well before the deadline');
});

t.test('node requests - a frame whose owner stops beating is lost; one unanswered past its deadline times out', async (t) => {
  const ownerNc = await conn();
  // Not closed at teardown: its close waits for answers under way, and these never come.
  const owner = new NodeRequests({ nc: ownerNc, names, logger: silentLogger, timeoutMs: 5000, isLive: () => true });
  owner.serve('d', 'http', () => new Promise<Uint8Array>(() => {}));
  await ownerNc.flush();
  let live = true;
  const asker = requests(await conn(), { timeoutMs: 60_000, isLive: () => live });
  const lost = asker.send('d', 'http', encode('x'));
  setTimeout(() => (live = false), 300);
  t.equal((await lost).kind, 'lost');
  const slow = requests(await conn(), { timeoutMs: 400 });
  const started = Date.now();
  t.equal((await slow.send('d', 'http', encode('y'))).kind, 'timeout');
  t.ok(Date.now() - started < 3000, 'within the deadline and a sweep');
});
