// Issue 17: revoked access stops on every node (and issue 28: so does a signed-out session). Two
// nodes on one nats-server; an API key and a user's access token are used through both, then
// revoked through one: the other refuses them within seconds (in practice on the next request: it
// is forwarded to the tenant's owner, and the revocation reaches every node's store through the
// commit stream).
import t from 'tap';
import { client } from '../helpers/http.js';
import { signupEverywhere, sleep, TestCluster } from './helpers.js';

const cluster = await TestCluster.start(t, { nodes: 2, orgs: [] });

/** Polls until `probe` answers 401; resolves how long that took, or -1 after `ms`. */
async function refusedWithin(probe: () => Promise<number>, ms: number): Promise<number> {
  const start = Date.now();
  while (Date.now() - start < ms) {
    if ((await probe()) === 401) return Date.now() - start;
    await sleep(20);
  }
  return -1;
}

t.test('cluster - an API key revoked and a user deleted through one node are refused through the other', async (t) => {
  const { orgId, token } = await signupEverywhere(t, cluster, 0, 'Revoke Cluster');
  const [a, b] = cluster.nodes.map((n) => client(n.url, { orgid: orgId }));
  const admin = { authorization: `Bearer ${token}` };
  const key = await a.post('/profile/api-keys', { name: 'cluster key' }, admin);
  t.equal(key.status, 201);
  const staff = await a.post('/profile/user/signup', { email: 'leaver@cluster.example', password: 'Correct-Horse-42!' }, admin);
  t.equal(staff.status, 201);
  const leaver = await a.post('/profile/user/signin', { orgId, email: 'leaver@cluster.example', password: 'Correct-Horse-42!' });
  const leaverAuth = { authorization: `Bearer ${leaver.body.token}` };
  for (const [i, c] of [a, b].entries()) {
    t.equal((await c.get('/profile/outbox/mine', { 'x-api-key': key.body.key })).status, 200, `the key works through node ${i + 1}`);
    t.equal((await c.get('/profile', leaverAuth)).status, 200, `the token works through node ${i + 1}`);
  }

  t.equal((await a.del(`/profile/api-keys/${key.body.id}`, admin)).status, 200, 'key revoked through node 1');
  const keyMs = await refusedWithin(async () => (await b.get('/profile/outbox/mine', { 'x-api-key': key.body.key })).status, 5000);
  t.ok(keyMs >= 0, `node 2 refuses the revoked key (after ${keyMs} ms)`);

  t.equal((await a.del('/profile/user/self', leaverAuth)).status, 200, 'user deleted through node 1');
  const tokenMs = await refusedWithin(async () => (await b.get('/profile/outbox/mine', leaverAuth)).status, 5000);
  t.ok(tokenMs >= 0, `node 2 refuses the deleted user's token (after ${tokenMs} ms)`);
  t.equal((await b.get('/profile/outbox/mine', admin)).status, 200, "the Admin's token still works through node 2");
});

t.test('cluster - a session signed out through one node is refused through the other; another session works', async (t) => {
  const { orgId, email } = await signupEverywhere(t, cluster, 1, 'Signout Cluster');
  const [a, b] = cluster.nodes.map((n) => client(n.url, { orgid: orgId }));
  const creds = { orgId, email };
  const signIn = () => a.post('/profile/user/signin', { ...creds, password: 'Correct-Horse-42!' });
  const first = await signIn();
  const second = await signIn();
  t.equal(first.status, 200, 'signed in');
  const firstAuth = { authorization: `Bearer ${first.body.token}` };
  t.equal((await b.get('/profile', firstAuth)).status, 200, 'the token works through node 2');
  t.same((await a.post('/profile/signout', {}, firstAuth)).body, { signedOut: true }, 'signed out through node 1');
  const ms = await refusedWithin(async () => (await b.get('/profile', firstAuth)).status, 5000);
  t.ok(ms >= 0, `node 2 refuses the signed-out token (after ${ms} ms)`);
  t.equal((await b.get('/profile', { authorization: `Bearer ${second.body.token}` })).status, 200, 'the other session works through node 2');
});
