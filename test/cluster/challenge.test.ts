// Sign-in challenges across nodes: a challenge is held by its organisation's owner, and the routes
// that answer it name the organisation only in the challenge token (no orgid header), so a node
// that does not own it must send them to the owner. Signing in, sending a fresh code and answering
// it each go through a different non-owner here.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { client } from '../helpers/http.js';
import { signupEverywhere, TestCluster } from './helpers.js';

const cluster = await TestCluster.start(t, { nodes: 3, orgs: [] });

/** The sign-in codes the local outbox of node `i` wrote for `to` (DATA_DIR/local-outbox-codes.jsonl). */
function codesOn(i: number, to: string): string[] {
  let text = '';
  try {
    text = readFileSync(join(cluster.nodes[i].dataDir, 'local-outbox-codes.jsonl'), 'utf8');
  } catch {
    return [];
  }
  return text
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { to: string; code: string })
    .filter((l) => l.to === to)
    .map((l) => l.code);
}

t.test('cluster - a sign-in challenge begun on one non-owner is re-sent and answered through another', async (t) => {
  const { orgId, token, email } = await signupEverywhere(t, cluster, 0, 'Challenge Cluster');
  const owner = await cluster.waitOwner(orgId);
  const [a, b] = [0, 1, 2].filter((i) => i !== owner);
  const admin = client(cluster.nodes[a].url, { orgid: orgId, authorization: `Bearer ${token}` });
  t.equal((await admin.put('/profile/org/security-settings', { enableTwoFactorForUsers: true })).status, 200);

  // No orgid header anywhere below: the body or the token names the organisation.
  const signin = await client(cluster.nodes[a].url).post('/profile/user/signin', { orgId, email, password: 'Correct-Horse-42!' });
  t.equal(signin.status, 200, `signed in through node ${a + 1}${signin.status === 200 ? '' : `: ${signin.text}`}`);
  t.equal(signin.body.requiresTwoFactor, true, 'challenged');
  const challengeToken: string = signin.body.challengeToken;
  const first = codesOn(owner, email);
  t.equal(first.length, 1, 'the owner sent the code');
  t.same([...codesOn(a, email), ...codesOn(b, email)], [], 'no other node did');

  const resent = await client(cluster.nodes[b].url).post('/profile/security/challenge/send', { challengeToken });
  t.equal(resent.status, 200, `a fresh code through node ${b + 1}: ${resent.text}`);
  const codes = codesOn(owner, email);
  t.equal(codes.length, 2, 'sent by the owner again');
  const wrong = await client(cluster.nodes[b].url).post('/profile/security/challenge/verify', { challengeToken, code: codes[0] === codes[1] ? '000000' : codes[0] });
  t.equal(wrong.status, 400, 'the first code stopped working');

  const ok = await client(cluster.nodes[b].url).post('/profile/security/challenge/verify', { challengeToken, code: codes[1] });
  t.equal(ok.status, 200, `answered through node ${b + 1}${ok.status === 200 ? '' : `: ${ok.text}`}`);
  t.ok(ok.body.token && ok.body.refreshToken, 'tokens');
  t.equal((await client(cluster.nodes[a].url, { orgid: orgId, authorization: `Bearer ${ok.body.token}` }).get('/profile')).status, 200, 'the session works through any node');
  t.equal((await client(cluster.nodes[a].url).post('/profile/security/challenge/verify', { challengeToken, code: codes[1] })).status, 401, 'a challenge answers once, whichever node is asked');
});
