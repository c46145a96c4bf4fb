// Issue 35: a node holds only the tenants it serves, yet a sign-in naming its organisation in the
// body, a refresh and a socket's handshake reach any node. The first two go to the owner
// (RouteDef.tenantHint);
// revocations are platform data (core/auth/revocations.ts keeps a copy every node holds), so a
// session signed out through the tenant's owner cannot open a socket on the other.
import t from 'tap';
import { io, type Socket } from 'socket.io-client';
import { client } from '../helpers/http.js';
import { signupEverywhere, sleep, TestCluster } from './helpers.js';

const cluster = await TestCluster.start(t, { nodes: 2, orgs: [] });

/** Opens a /community-chat socket on `url`: resolves 'connected', or the refusal's status code. */
function handshake(url: string, token: string, orgId: string): Promise<'connected' | number> {
  return new Promise((resolve) => {
    const s: Socket = io(url + '/community-chat', { transports: ['websocket'], forceNew: true, reconnection: false, auth: { token, orgId } });
    const done = (v: 'connected' | number) => {
      s.disconnect();
      resolve(v);
    };
    s.once('connect', () => done('connected'));
    s.once('connect_error', (e: Error & { data?: { statusCode?: number } }) => done(e.data?.statusCode ?? 0));
  });
}

t.test('cluster - a sign-in and a refresh through a node that does not hold the tenant work; the session signed out through the owner cannot open a socket there', async (t) => {
  const { orgId, email } = await signupEverywhere(t, cluster, 0, 'Socket Revocation');
  const owner = await cluster.waitOwner(orgId);
  const other = cluster.nodes[1 - owner];
  const viaOwner = client(cluster.nodes[owner].url, { orgid: orgId });
  const signIn = await client(other.url).post('/profile/user/signin', { orgId, email, password: 'Correct-Horse-42!' });
  t.equal(signIn.status, 200, `signed in through node ${2 - owner}, the organisation named in the body only`);
  const token = signIn.body.token as string;
  const refreshed = await client(other.url).post('/profile/user/refresh', { refreshToken: signIn.body.refreshToken });
  t.equal(refreshed.status, 200, `refreshed through node ${2 - owner} without the orgid header (the owner rotates it)`);
  t.equal(await handshake(other.url, token, orgId), 'connected', `a socket opens on node ${2 - owner} with the token`);

  t.same((await viaOwner.post('/profile/signout', {}, { authorization: `Bearer ${token}` })).body, { signedOut: true }, `signed out through node ${owner + 1}`);
  const started = Date.now();
  let answer: 'connected' | number = 'connected';
  while (Date.now() - started < 5000 && (answer = await handshake(other.url, token, orgId)) === 'connected') await sleep(50);
  t.equal(answer, 401, `node ${2 - owner} refuses the signed-out session's socket (after ${Date.now() - started} ms)`);
});
