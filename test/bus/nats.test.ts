// The bus contract over a real nats-server (two connections = two nodes), plus what only a
// network bus has: queue groups across nodes and surviving a server restart.
import t from 'tap';
import { createBus } from '../../core/bus/index.js';
import { NatsBus } from '../../core/bus/nats.js';
import { findNatsServer, startNatsServer } from '../helpers/nats-server.js';
import { runBusContract } from './contract.js';

const server = await startNatsServer();
t.teardown(() => server.stop());

async function pair() {
  const a = await NatsBus.connect(server.url, { name: 'node-a' });
  const b = await NatsBus.connect(server.url, { name: 'node-b' });
  return { a, b, close: async () => void (await Promise.all([a.close(), b.close()])) };
}

runBusContract(t, 'NatsBus', pair);

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

t.test('nats-server helper - the binary is found', async (t) => {
  t.type(findNatsServer(), 'string');
  t.match(server.url, /^nats:\/\/127\.0\.0\.1:\d+$/);
});

t.test('nats-server helper - a missing binary is an error that says how to install it', async (t) => {
  await t.rejects(startNatsServer({ bin: '/nonexistent/nats-server' }), {
    message:
      'nats-server binary not found: install the Debian package nats-server (apt-get install -y nats-server)',
  });
});

t.test('createBus - with natsUrl the bus is NATS', async (t) => {
  const bus = await createBus({ natsUrl: server.url });
  t.teardown(() => bus.close());
  t.ok(bus instanceof NatsBus);
});

t.test('NatsBus - connect to a server that is not there fails with the url', async (t) => {
  await t.rejects(
    NatsBus.connect('nats://127.0.0.1:1', { connectOptions: { timeout: 500 } }),
    { message: /cannot connect to NATS at nats:\/\/127\.0\.0\.1:1/ },
  );
});

t.test('NatsBus - responders on two nodes share the requests of one subject', async (t) => {
  const { a, b, close } = await pair();
  t.teardown(close);
  const count = { a: 0, b: 0 };
  a.respond('work.item', () => ++count.a);
  b.respond('work.item', () => ++count.b);
  await a.flush();
  await b.flush();
  await Promise.all(Array.from({ length: 200 }, (_, i) => a.ask('work.item', i)));
  t.equal(count.a + count.b, 200, 'each request answered once');
  t.ok(count.a > 0 && count.b > 0, `both nodes served (${count.a} / ${count.b})`);
});

t.test('NatsBus - bus traffic stays under its prefix', async (t) => {
  const { a, b, close } = await pair();
  t.teardown(close);
  const other = await NatsBus.connect(server.url, { prefix: 'other' });
  t.teardown(() => other.close());
  const got: string[] = [];
  b.subscribe('>', (_e, s) => got.push(`b:${s}`));
  other.subscribe('>', (_e, s) => got.push(`other:${s}`));
  b.respond('p.ask', () => 1);
  await b.flush();
  await other.flush();
  t.equal(await a.ask('p.ask', null), 1);
  a.publish('p.ev', 1);
  a.publish('p.end', 1);
  await a.flush();
  const deadline = Date.now() + 5000;
  while (!got.includes('b:p.end') && Date.now() < deadline) await sleep(5);
  t.same(got, ['b:p.ev', 'b:p.end'], 'a `>` listener sees events only: no requests, replies, or other prefixes');
  await t.rejects(other.ask('p.ask', null), { code: 'ERR_UNAVAILABLE' });
});

t.test('NatsBus - survives a nats-server restart on the same port', async (t) => {
  const { a, b, close } = await pair();
  t.teardown(close);
  const events: number[] = [];
  b.respond('alive.ask', (msg) => ({ echo: msg }));
  b.subscribe('alive.ev', (ev) => events.push(ev as number));
  await b.flush();
  t.same(await a.ask('alive.ask', 1), { echo: 1 });

  const before = { pid: server.pid, id: a.connection.info?.server_id };
  await server.restart();
  const restarted = Date.now();
  t.not(server.pid, before.pid, 'a new server process');
  let answer: unknown;
  let last: unknown;
  while (answer === undefined && Date.now() - restarted < 10_000) {
    try {
      answer = await a.ask('alive.ask', 2, { timeoutMs: 500 });
    } catch (err) {
      last = err; // disconnected, or b has not resubscribed yet
      await sleep(100);
    }
  }
  t.same(answer, { echo: 2 }, `ask works again after ${Date.now() - restarted} ms (last error: ${String(last)})`);
  t.ok(Date.now() - restarted < 5000, 'within a few seconds');
  t.not(a.connection.info?.server_id, before.id, 'the bus reconnected to the new server');

  a.publish('alive.ev', 3);
  const deadline = Date.now() + 5000;
  while (events.length === 0 && Date.now() < deadline) await sleep(10);
  t.same(events, [3], 'subscriptions are back too');
});
