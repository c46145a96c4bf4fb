// Issue 33's leftover in cluster mode: an index an organisation declares travels in the commit
// stream, so its owner builds it, a node that takes the organisation over has it too, and a unique
// one refuses a duplicate whichever node the write arrives at, before and after a takeover.
import t from 'tap';
import { client } from '../helpers/http.js';
import { createBody } from '../records/setup.js';
import { signupEverywhere, sleep, TestCluster } from './helpers.js';

const cluster = await TestCluster.start(t, { nodes: 2, orgs: [] });

type Client = ReturnType<typeof client>;

/** Polls an index through `c` until it leaves `building`. */
async function settled(c: Client, id: string): Promise<Record<string, any>> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const r = await c.get(`/repository/indexes/${id}`);
    if (r.status === 200 && r.body.state !== 'building') return r.body;
    if (Date.now() > deadline) throw new Error(`index ${id}: ${r.status} ${r.text}`);
    await sleep(50);
  }
}

t.test('cluster - a unique index declared through either node is built by the owner and by the node that takes the organisation over; deleted there', async (t) => {
  const { orgId, token } = await signupEverywhere(t, cluster, 0, 'Index Cluster');
  const headers = { orgid: orgId, authorization: `Bearer ${token}` };
  const [a, b] = cluster.nodes.map((n) => client(n.url, headers));
  t.equal((await a.post('/repository/create', createBody('member', { code: 'A1' }))).status, 201);
  const owner = await cluster.waitOwner(orgId);
  const [viaOwner, viaOther] = owner === 0 ? [a, b] : [b, a];

  const made = await viaOther.post('/repository/indexes', { datatype: 'member', path: 'data.code', unique: true });
  t.equal(made.status, 202, `declared through the node that does not own the organisation: ${made.text}`);
  t.match(made.body, { datatype: 'member', path: 'data.code', unique: true });
  t.equal((await settled(viaOwner, made.body.id)).state, 'ready');
  const again = await viaOwner.post('/repository/indexes', { datatype: 'member', path: 'data.code' });
  t.equal(again.status, 409, 'the path is indexed already');
  for (const [i, c] of [a, b].entries()) {
    const dup = await c.post('/repository/create', createBody('member', { code: 'A1' }));
    t.equal(dup.status, 409, `a duplicate through node ${i + 1} is refused`);
    t.match(dup.body.message, /unique/);
  }
  t.equal((await viaOther.post('/repository/create', createBody('member', { code: 'B2' }))).status, 201);

  // The owner dies: the other node takes the organisation over with the index it built from the stream.
  await cluster.kill9(owner);
  const survivor = 1 - owner;
  const c = [a, b][survivor];
  // The first request after the lease ran out makes the survivor take the organisation over.
  t.equal((await settled(c, made.body.id)).state, 'ready', 'the new owner has the index');
  t.equal(await cluster.waitOwner(orgId, 5000, owner), survivor);
  const listed = await c.get('/repository/indexes');
  t.same((listed.body.declared as Array<{ id: string }>).map((d) => d.id), [made.body.id]);
  const dup = await c.post('/repository/create', createBody('member', { code: 'B2' }));
  t.equal(dup.status, 409, 'the new owner refuses a duplicate too');

  const del = await c.del(`/repository/indexes/${made.body.id}`);
  t.equal(del.status, 200);
  t.equal((await c.get(`/repository/indexes/${made.body.id}`)).status, 404);
  t.equal((await c.del(`/repository/indexes/${made.body.id}`)).status, 404, 'deleted once');
  t.equal((await c.post('/repository/create', createBody('member', { code: 'B2' }))).status, 201, 'a deleted unique index refuses nothing');
});
