// The socket.io cluster adapter (edge/cluster-adapter.ts): two socket.io servers, each with its own
// bus connection, behave as one for rooms, broadcasts, fetchSockets, socketsJoin and
// serverSideEmit. Run over a real nats-server (two connections = two nodes) and over one
// in-process bus.
import { createServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import t, { type Test } from 'tap';
import { Server } from 'socket.io';
import { io as ioc, type Socket as ClientSocket } from 'socket.io-client';
import type { Bus } from '../../core/bus/bus.js';
import { InProcessBus } from '../../core/bus/in-process.js';
import { NatsBus } from '../../core/bus/nats.js';
import { busAdapter } from '../../edge/cluster-adapter.js';
import { once } from '../chat/helpers.js';
import { startNatsServer } from '../helpers/nats-server.js';

const nats = await startNatsServer();
t.teardown(() => nats.stop());

interface Node {
  io: Server;
  url: string;
}

async function node(t: Test, bus: Bus): Promise<Node> {
  const http: HttpServer = createServer();
  const io = new Server(http, { transports: ['websocket'], adapter: busAdapter(bus, { heartbeatInterval: 200, heartbeatTimeout: 1000 }) });
  await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
  t.teardown(async () => {
    await io.close();
  });
  return { io, url: `http://127.0.0.1:${(http.address() as AddressInfo).port}` };
}

function client(t: Test, n: Node): ClientSocket {
  const s = ioc(n.url, { transports: ['websocket'], forceNew: true, reconnection: false });
  t.teardown(() => {
    s.disconnect();
  });
  return s;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Waits until the two adapters know each other (their heartbeats crossed). */
async function acquainted(a: Node, b: Node): Promise<void> {
  const deadline = Date.now() + 5000;
  while ((await a.io.of('/').adapter.serverCount()) < 2 || (await b.io.of('/').adapter.serverCount()) < 2) {
    if (Date.now() > deadline) throw new Error('the adapters never met');
    await sleep(20);
  }
}

type Pair = () => Promise<{ a: Bus; b: Bus; close(): Promise<void> }>;

function suite(name: string, pair: Pair): void {
  t.test(`BusAdapter over ${name} - a room spans both servers: broadcast, exceptions, binary`, async (t) => {
    const buses = await pair();
    t.teardown(() => buses.close());
    const A = await node(t, buses.a);
    const B = await node(t, buses.b);
    await acquainted(A, B);
    A.io.on('connection', (s) => s.join('stage'));
    B.io.on('connection', (s) => {
      if (s.handshake.query.member === '1') s.join('stage');
    });
    const onA = client(t, A);
    const onB = client(t, B);
    const outside = ioc(B.url, { transports: ['websocket'], forceNew: true, reconnection: false, query: { member: '0' } });
    t.teardown(() => void outside.disconnect());
    const inside = ioc(B.url, { transports: ['websocket'], forceNew: true, reconnection: false, query: { member: '1' } });
    t.teardown(() => void inside.disconnect());
    await Promise.all([onA, onB, outside, inside].map((s) => once(s, 'connect')));

    const got = [once(onA, 'hello'), once(inside, 'hello')];
    const heardOutside: unknown[] = [];
    outside.on('hello', (d) => heardOutside.push(d));
    A.io.to('stage').emit('hello', { from: 'A', blob: Buffer.from([1, 2, 3]) });
    for (const g of await Promise.all(got)) {
      t.equal(g.from, 'A');
      t.same([...new Uint8Array(g.blob)], [1, 2, 3], 'binary survives the trip');
    }
    // An exception crosses too: everyone in the room but `inside`.
    const again = once(onA, 'again');
    const insideGot: unknown[] = [];
    inside.on('again', (d) => insideGot.push(d));
    B.io.to('stage').except(inside.id!).emit('again', 2);
    t.equal(await again, 2);
    await sleep(100);
    t.same(insideGot, [], 'the excepted socket on the other server is skipped');
    t.same(heardOutside, [], 'a socket outside the room hears nothing');
  });

  t.test(`BusAdapter over ${name} - fetchSockets, socketsJoin and serverSideEmit see both servers`, async (t) => {
    const buses = await pair();
    t.teardown(() => buses.close());
    const A = await node(t, buses.a);
    const B = await node(t, buses.b);
    await acquainted(A, B);
    const c1 = client(t, A);
    const c2 = client(t, B);
    await Promise.all([once(c1, 'connect'), once(c2, 'connect')]);

    const all = await A.io.fetchSockets();
    t.same(all.map((s) => s.id).sort(), [c1.id, c2.id].sort(), 'fetchSockets lists the sockets of both servers');

    // Make c2 (on B) join a room from A, then address the room from A.
    A.io.in(c2.id!).socketsJoin('late');
    await sleep(150);
    const inRoom = await A.io.in('late').fetchSockets();
    t.same(inRoom.map((s) => s.id), [c2.id]);
    const late = once(c2, 'late');
    A.io.to('late').emit('late', 'yes');
    t.equal(await late, 'yes');

    B.io.on('ping-node', (n: number, cb: (v: unknown) => void) => cb({ node: 'B', n: n + 1 }));
    const answers = await A.io.serverSideEmitWithAck('ping-node', 41);
    t.same(answers, [{ node: 'B', n: 42 }], 'serverSideEmit reaches the other server and its ack comes back');
  });
}

suite('NATS', async () => {
  const a = await NatsBus.connect(nats.url, { name: 'adapter-a' });
  const b = await NatsBus.connect(nats.url, { name: 'adapter-b' });
  return { a, b, close: async () => void (await Promise.all([a.close(), b.close()])) };
});

suite('the in-process bus', async () => {
  const bus = new InProcessBus();
  return { a: bus, b: bus, close: () => bus.close() };
});
