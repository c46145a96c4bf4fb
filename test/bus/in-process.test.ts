import t from 'tap';
import { InProcessBus } from '../../core/bus/in-process.js';
import { createBus } from '../../core/bus/index.js';
import { runBusContract } from './contract.js';

runBusContract(t, 'InProcessBus', async () => {
  const bus = new InProcessBus();
  return { a: bus, b: bus, close: () => bus.close() };
});

t.test('createBus - without natsUrl the bus is in-process', async (t) => {
  const bus = await createBus({});
  t.teardown(() => bus.close());
  t.ok(bus instanceof InProcessBus);
});

t.test('InProcessBus - the most recently registered matching responder answers', async (t) => {
  const bus = new InProcessBus();
  t.teardown(() => bus.close());
  const offStar = bus.respond('who.*', () => 'star');
  t.equal(await bus.ask('who.x', null), 'star');
  const offExact = bus.respond('who.x', () => 'exact');
  t.equal(await bus.ask('who.x', null), 'exact');
  const offTail = bus.respond('who.>', () => 'tail');
  t.equal(await bus.ask('who.x', null), 'tail');
  offTail();
  t.equal(await bus.ask('who.x', null), 'exact');
  offExact();
  t.equal(await bus.ask('who.x', null), 'star');
  offStar();
  await t.rejects(bus.ask('who.x', null), { code: 'ERR_UNAVAILABLE' });
});

t.test('InProcessBus - publish delivers later, never inside publish()', async (t) => {
  const bus = new InProcessBus();
  t.teardown(() => bus.close());
  const got: unknown[] = [];
  bus.subscribe('later', (ev) => got.push(ev));
  bus.publish('later', 1);
  t.same(got, [], 'nothing yet');
  await bus.flush();
  t.same(got, [1], 'delivered by flush()');
});

t.test('InProcessBus - ask runs the responder later, never inside ask()', async (t) => {
  const bus = new InProcessBus();
  t.teardown(() => bus.close());
  let ran = false;
  bus.respond('later.ask', () => {
    ran = true;
    return 1;
  });
  const p = bus.ask('later.ask', null);
  t.equal(ran, false);
  t.equal(await p, 1);
});

t.test('InProcessBus - events published by a listener keep their order', async (t) => {
  const bus = new InProcessBus();
  t.teardown(() => bus.close());
  const got: string[] = [];
  bus.subscribe('chain.*', (ev, subject) => {
    got.push(`${subject}:${ev as number}`);
    if (subject === 'chain.a') bus.publish('chain.b', ev);
  });
  bus.publish('chain.a', 1);
  bus.publish('chain.a', 2);
  await bus.flush();
  t.same(got, ['chain.a:1', 'chain.a:2', 'chain.b:1', 'chain.b:2']);
});

t.test('InProcessBus - a subscription made after publish() does not get the event', async (t) => {
  const bus = new InProcessBus();
  t.teardown(() => bus.close());
  const got: unknown[] = [];
  bus.publish('race.ev', 1);
  bus.subscribe('race.ev', (ev) => got.push(ev));
  bus.publish('race.ev', 2);
  await bus.flush();
  t.same(got, [2]);
});

t.test('InProcessBus - a responder removed before it runs is not called', async (t) => {
  const bus = new InProcessBus();
  t.teardown(() => bus.close());
  let calls = 0;
  const off = bus.respond('gone.ask', () => ++calls);
  const p = bus.ask('gone.ask', null);
  off();
  await t.rejects(p, { code: 'ERR_UNAVAILABLE' });
  t.equal(calls, 0);
});

t.test('InProcessBus - an unencodable reply becomes ERR_INTERNAL', async (t) => {
  const bus = new InProcessBus();
  t.teardown(() => bus.close());
  bus.respond('bigint.sync', () => 1n);
  bus.respond('bigint.async', async () => 1n);
  await t.rejects(bus.ask('bigint.sync', null), { code: 'ERR_INTERNAL' });
  await t.rejects(bus.ask('bigint.async', null), { code: 'ERR_INTERNAL' });
});

t.test('InProcessBus - matching stays right past the match-cache limit', async (t) => {
  const bus = new InProcessBus();
  t.teardown(() => bus.close());
  let n = 0;
  bus.subscribe('many.*', () => n++);
  bus.respond('many.ask.*', () => 'ok');
  for (let i = 0; i < 25_000; i++) bus.publish(`many.${i}`, i);
  await bus.flush();
  t.equal(n, 25_000);
  t.equal(await bus.ask('many.ask.1', null), 'ok');
  await t.rejects(bus.ask('many.ask', null), { code: 'ERR_UNAVAILABLE' });
});
