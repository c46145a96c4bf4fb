// Appends to the commit stream (core/cluster/stream-appends.ts) over a real nats-server: each
// resolves the sequence JetStream stored it at, JetStream's expected-last-subject-sequence check
// still refuses a stale append, and an append nobody stores fails rather than hangs.
import t from 'tap';
import { jetstreamManager } from '@nats-io/jetstream';
import { ackSequence, AppendError, StreamAppends } from '../../core/cluster/stream-appends.js';
import { natsClients, startNatsServer } from '../helpers/nats-server.js';

const nats = await startNatsServer();
t.teardown(() => nats.stop());

const conn = natsClients(t, nats);

const nc = await conn();
const jsm = await jetstreamManager(nc);
await jsm.streams.add({ name: 'SA', subjects: ['sa.>'], storage: 'file', num_replicas: 1 });
const bytes = (s: string) => new TextEncoder().encode(s);

t.test('StreamAppends - appends resolve the sequences JetStream stored them at; a stale expected subject sequence is refused with its code and stores nothing', async (t) => {
  const appends = new StreamAppends(nc, 5000);
  t.teardown(() => appends.close());
  const [s1, s2] = await Promise.all([appends.append('sa.t.one', bytes('a'), 0), appends.append('sa.t.two', bytes('b'))]);
  t.ok(s1 > 0 && s2 > 0 && s1 !== s2, `stored at ${s1} and ${s2}`);
  t.equal((await jsm.streams.getMessage('SA', { seq: s1 }))?.subject, 'sa.t.one');
  const s3 = await appends.append('sa.t.one', bytes('c'), s1);
  t.ok(s3 > s2, 'an append expecting the subject’s last sequence is stored');
  const err = await appends.append('sa.t.one', bytes('d'), s1).then(
    () => undefined,
    (e: unknown) => e,
  );
  t.ok(err instanceof AppendError, 'a stale one fails');
  t.equal((err as AppendError).code, 10071, 'with JetStream’s wrong-last-sequence code');
  const info = await jsm.streams.info('SA', { subjects_filter: 'sa.t.one' });
  t.equal(info.state.subjects?.['sa.t.one'], 2, 'and nothing of it is stored');
});

t.test('StreamAppends - an append to a subject no stream stores fails at once; one nobody acknowledges fails after its timeout', async (t) => {
  const appends = new StreamAppends(nc, 300);
  t.teardown(() => appends.close());
  const t0 = performance.now();
  await t.rejects(appends.append('nostream.x', bytes('a')), /no responders/);
  t.ok(performance.now() - t0 < 250, 'no responders: failed before the timeout');
  // A plain subscriber receives the append and never answers it.
  const other = await conn();
  other.subscribe('silent.x', { callback: () => {} });
  await other.flush();
  const t1 = performance.now();
  await t.rejects(appends.append('silent.x', bytes('a')), /not acknowledged within 300 ms/);
  const waited = performance.now() - t1;
  t.ok(waited >= 290 && waited < 2000, `unanswered: failed after ${waited.toFixed(0)} ms`);
});

t.test('StreamAppends - a closed appender takes no more appends, and one in flight still ends with its acknowledgement', async (t) => {
  const appends = new StreamAppends(nc, 5000);
  const inFlight = appends.append('sa.t.close', bytes('a'));
  appends.close();
  t.ok((await inFlight) > 0, 'the append in flight resolved its sequence');
  await t.rejects(appends.append('sa.t.close', bytes('b')), /closed/);
});

t.test('StreamAppends - ackSequence reads a PubAck’s sequence and nothing else', async (t) => {
  t.equal(ackSequence(bytes('{"stream":"SA","seq":42}')), 42);
  t.equal(ackSequence(bytes('{"stream":"SA","domain":"d","seq":7,"duplicate":true}')), 7);
  t.equal(ackSequence(bytes('{"stream":"SA", "seq": 9007199254740991}')), 9007199254740991);
  t.equal(ackSequence(bytes('{"error":{"code":400,"err_code":10071,"description":"wrong last sequence: 1"},"stream":"SA","seq":0}')), undefined);
  t.equal(ackSequence(bytes('{"stream":"SA","seq":0}')), undefined);
  t.equal(ackSequence(bytes('{"stream":"SA"}')), undefined);
  t.equal(ackSequence(bytes('')), undefined);
  t.equal(ackSequence(bytes('{"stream":"SA","seq":99999999999999999999}')), undefined, 'beyond a safe integer');
});

t.test('StreamAppends - a reply subject serves again once its acknowledgement came, never after its append timed out', async (t) => {
  const appends = new StreamAppends(nc, 300);
  t.teardown(() => appends.close());
  // A plain subscriber sees each append's reply subject next to JetStream.
  const watcher = await conn();
  const replies: string[] = [];
  watcher.subscribe('sa.t.reuse', {
    callback: (_e, m) => {
      replies.push(m.reply ?? '');
    },
  });
  let pending: Array<{ reply: string; data: string }> = [];
  watcher.subscribe('silent.reuse', {
    callback: (_e, m) => {
      pending.push({ reply: m.reply ?? '', data: new TextDecoder().decode(m.data) });
    },
  });
  await watcher.flush();
  let last: number | undefined;
  for (let i = 0; i < 3; i++) last = await appends.append('sa.t.reuse', bytes(`a${i}`), last);
  await watcher.flush();
  t.equal(replies.length, 3);
  t.equal(new Set(replies).size, 1, 'appends one after another reuse one reply subject');

  // Nobody acknowledges this one: it times out and its subject is retired.
  await t.rejects(appends.append('silent.reuse', bytes('lost')), /not acknowledged/);
  const retired = pending[0].reply;
  t.equal(retired, replies[0], 'the free subject served the unacknowledged append');
  pending = [];
  const next = appends.append('silent.reuse', bytes('next'));
  await watcher.flush();
  await new Promise((r) => setTimeout(r, 20));
  t.equal(pending.length, 1);
  t.not(pending[0].reply, retired, 'the next append has a reply subject of its own');
  // The retired append's acknowledgement arrives late: it settles nothing.
  let settled: number | undefined;
  void next.then((seq) => (settled = seq), () => undefined);
  watcher.publish(retired, bytes('{"stream":"SA","seq":999}'));
  await watcher.flush();
  await new Promise((r) => setTimeout(r, 50));
  t.equal(settled, undefined, 'a late acknowledgement of a timed-out append does not settle another');
  watcher.publish(pending[0].reply, bytes('{"stream":"SA","seq":5}'));
  t.equal(await next, 5, 'the append settles with its own acknowledgement');
});
