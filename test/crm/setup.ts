// Shared set-up of the CRM and phone tests: a real node (port 0, temp LMDB) with two
// organisations, staff clients of each, and a client with any principal.
import type { Test } from 'tap';
import type { Principal } from '../../core/auth/tokens.js';
import type { StartOptions } from '../../edge/app.js';
import { createOrg, startTestApp, tokenFor } from '../helpers/app.js';
import { client, type Reply } from '../helpers/http.js';

export const A = 'acme';
export const B = 'globex';
export const WEBHOOK_SECRET = 'hook-secret-0123456789abcdef';

interface Teardown {
  teardown(fn: () => unknown): void;
}

export async function setup(t: Teardown, opts: StartOptions & { dataDir?: string } = {}) {
  const app = await startTestApp(t, {
    ...opts,
    config: { voice: { provider: 'local', tokenTtlSeconds: 3600, webhookSecret: WEBHOOK_SECRET, acceptSharedSecretHeader: true }, ...opts.config },
  });
  await createOrg(app, A);
  await createOrg(app, B);
  const as = (p: Partial<Principal> & { org: string }) =>
    client(app.url, { orgid: p.org, authorization: `Bearer ${tokenFor(app, p)}` });
  return {
    app,
    /** Staff (User) of A, email staff@example.com. */
    a: as({ org: A, email: 'agent@acme.test', sub: 'user-a' }),
    admin: as({ org: A, email: 'admin@acme.test', sub: 'user-admin', roles: ['User', 'Admin'] }),
    b: as({ org: B, email: 'agent@globex.test', sub: 'user-b' }),
    as,
    anon: (org: string) => client(app.url, { orgid: org }),
    /** A customer of A (not staff). */
    customer: as({ org: A, kind: 'customer', roles: [], email: 'cust@acme.test', sub: 'cust-1', customerId: 'cust-1' }),
  };
}

type Call = (path: string) => Promise<Reply>;

/**
 * The access checks every staff route must pass: no token 401, a customer token 403, a token of
 * another org 403, no orgid 400.
 */
export async function assertStaffOnly(
  t: Test,
  env: Awaited<ReturnType<typeof setup>>,
  method: 'get' | 'post' | 'put' | 'del',
  path: string,
  body: unknown = {},
): Promise<void> {
  const send = (c: ReturnType<typeof client>) =>
    method === 'get' || method === 'del' ? (c[method] as Call)(path) : c[method](path, body);
  t.equal((await send(env.anon(A))).status, 401, `${method.toUpperCase()} ${path}: no token → 401`);
  t.equal((await send(env.customer)).status, 403, `${method.toUpperCase()} ${path}: customer token → 403`);
  t.equal((await send(client(env.app.url, { orgid: A, authorization: `Bearer ${tokenFor(env.app, { org: B })}` }))).status, 403, `${method.toUpperCase()} ${path}: other org's token → 403`);
  const noOrg = client(env.app.url, { authorization: `Bearer ${tokenFor(env.app, { org: A })}` });
  t.equal((await send(noOrg)).status, 400, `${method.toUpperCase()} ${path}: no orgid → 400`);
}

/** The validation messages of a 400, joined. */
export function messages(r: Reply): string {
  const m = r.body?.message;
  return Array.isArray(m) ? m.join('; ') : String(m);
}
