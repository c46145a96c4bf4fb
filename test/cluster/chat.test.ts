// Chat across nodes: sockets of one room connected to different nodes hear each other, history is
// replayed by any node, and presence counts users connected to any node.
import t from 'tap';
import { io, type Socket } from 'socket.io-client';
import { ack, collect, eventually, once, until } from '../chat/helpers.js';
import { client } from '../helpers/http.js';
import { sleep, TestCluster, token } from './helpers.js';

const cluster = await TestCluster.start(t, { nodes: 3, orgs: ['fest'] });

interface Who {
  id: string;
  token: string;
  email: string;
}

function customerOf(name: string): Who {
  const id = `cust-${name}`;
  const email = `${name}@example.com`;
  return { id, email, token: token({ org: 'fest', kind: 'customer', sub: id, customerId: id, email }) };
}

function agentOf(name: string): Who {
  const id = `agent-${name}`;
  const email = `${name}@staff.example.com`;
  return { id, email, token: token({ org: 'fest', sub: id, email }) };
}

function connect(t: { teardown(fn: () => unknown): void }, node: number, nsp: '/chat' | '/community-chat', who: Who, extra: Record<string, unknown> = {}): Socket {
  const s = io(cluster.nodes[node].url + nsp, { transports: ['websocket'], forceNew: true, reconnection: false, auth: { token: who.token, orgId: 'fest', ...extra } });
  t.teardown(() => {
    s.disconnect();
  });
  return s;
}

t.test('cluster - a group message from a socket on node 1 reaches the room on nodes 2 and 3, and any node replays it', async (t) => {
  const [ann, ben, cat] = ['ann', 'ben', 'cat'].map(customerOf);
  const annA = connect(t, 0, '/community-chat', ann);
  const benB = connect(t, 1, '/community-chat', ben);
  const benC = connect(t, 2, '/community-chat', ben);
  const catC = connect(t, 2, '/community-chat', cat);
  await Promise.all([annA, benB, benC, catC].map((s) => once(s, 'connect')));

  t.match(await ack(annA, 'joinGroup', { groupId: 'stage-crew' }), { groupId: 'stage-crew', members: 1, joined: true });
  t.match(await ack(benB, 'joinGroup', { groupId: 'stage-crew' }), { members: 2 }, 'membership is one count, whichever node joins');

  const onB = once(benB, 'groupMessage');
  const onC = once(benC, 'groupMessage');
  const catHeard = collect(catC, 'groupMessage');
  const m = await ack(annA, 'sendGroupMessage', { groupId: 'stage-crew', text: 'Soundcheck at 5' });
  t.match(m, { seq: 1, groupId: 'stage-crew', from: { id: ann.id } });
  t.match(await onB, { id: m.id, text: 'Soundcheck at 5' }, 'heard on node 2');
  t.match(await onC, { id: m.id, text: 'Soundcheck at 5' }, 'heard on node 3, on the socket that joined on no node at all');

  // And back the other way, from node 2.
  const onA = once(annA, 'groupMessage');
  const back = await ack(benB, 'sendGroupMessage', { groupId: 'stage-crew', text: 'On my way' });
  t.match(await onA, { id: back.id, seq: 2 });
  await sleep(100);
  t.equal(catHeard.length, 0, 'a non-member on a node with members hears nothing');

  // A socket opening on node 3 replays the history (read on the tenant's owner, whichever node that is).
  await sleep(200);
  const ann3 = connect(t, 2, '/community-chat', ann, { lastSeqs: { 'g:stage-crew': 0 } });
  const replayed = collect(ann3, 'groupMessage');
  await once(ann3, 'connect');
  await eventually(() => replayed.length === 2, 3000, 'replay of both messages');
  t.same(replayed.map((r) => r.seq), [1, 2]);
});

t.test('cluster - presence lists users connected to any node, and hears them leave', async (t) => {
  const [dan, eve] = ['dan', 'eve'].map(customerOf);
  const danA = connect(t, 0, '/community-chat', dan);
  await once(danA, 'connect');
  const first = await ack(danA, 'getOnlineUsers', {});
  t.ok(first.users.some((u: any) => u.userId === dan.id && u.online), 'dan watches presence from node 1');
  const eveOn = until(danA, 'onlineStatus', (d: any) => d.userId === eve.id && d.online, 5000);
  const eveC = connect(t, 2, '/community-chat', eve);
  await once(eveC, 'connect');
  t.match(await eveOn, { userId: eve.id, online: true }, 'node 1 hears a user come online on node 3');
  const list = await ack(connect(t, 1, '/community-chat', customerOf('fay')), 'getOnlineUsers', {});
  const online = (list.users as Array<{ userId: string }>).map((u) => u.userId);
  t.ok(online.includes(dan.id) && online.includes(eve.id), `node 2 lists users of nodes 1 and 3: ${online.join(', ')}`);
  const eveOff = until(danA, 'onlineStatus', (d: any) => d.userId === eve.id && !d.online, 5000);
  eveC.disconnect();
  t.match(await eveOff, { userId: eve.id, online: false }, 'and hears them leave');

  // Agents on /chat: REST through any node lists agents connected to every node.
  const [alice, bob] = ['alice', 'bob'].map(agentOf);
  const aliceA = connect(t, 0, '/chat', alice);
  const bobC = connect(t, 2, '/chat', bob);
  await Promise.all([once(aliceA, 'authenticate'), once(bobC, 'authenticate')]);
  const http = client(cluster.nodes[1].url, { orgid: 'fest', authorization: `Bearer ${alice.token}` });
  await eventually(
    async () => {
      const r = await http.get('/chat/agents/online');
      const emails = (r.body?.data ?? []).map((a: any) => a.email);
      return emails.includes(alice.email) && emails.includes(bob.email);
    },
    5000,
    'both agents listed through node 2',
  );
  t.pass('agents on nodes 1 and 3 are online through node 2');
});
