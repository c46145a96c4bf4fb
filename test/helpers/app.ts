// Starts a real node of the service for a test: port 0, a temp LMDB directory, silent logs, a
// fixed JWT secret; closed and removed in teardown. A test names the modules it exercises
// (`startTestApp(t, { modules: ['events'] })`, edge/modules.ts): only those, and the modules they
// require, are loaded; without names the node runs every module. The app itself is loaded at the
// first start: a file that takes only tempDir or the secret from here does not load it.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Principal } from '../../core/auth/tokens.js';
import { WriteBatch } from '../../core/store/store.js';
import type { RunningApp, StartOptions } from '../../edge/app.js';

export const TEST_JWT_SECRET = 'test-secret-0123456789-0123456789-0123456789';

interface Teardown {
  teardown(fn: () => unknown): void;
}

export function tempDir(t: Teardown, prefix = 'bp-test-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/**
 * Query workers of a test node: one, no spare, started with the node's first query (most test
 * nodes run none). Each worker is a thread that loads every query job module, ~1.5 s of CPU, which
 * was most of a node's start-up CPU; what a test asserts does not depend on how many run at once
 * or when they start. A test
 * that sets `query` itself (the pool, budget and fairness tests) gets exactly what it asks for over
 * config/default.json, as before.
 */
const TEST_QUERY = { workers: 1, spareWorkers: 0, warmAtStart: false };

export async function startTestApp(t: Teardown, opts: StartOptions & { dataDir?: string } = {}): Promise<RunningApp> {
  const dataDir = opts.dataDir ?? tempDir(t);
  const { startApp } = await import('../../edge/app.js');
  const app = await startApp({
    ...opts,
    env: opts.env ?? {},
    config: {
      port: 0,
      host: '127.0.0.1',
      dataDir,
      logLevel: 'silent',
      jwtSecret: TEST_JWT_SECRET,
      query: TEST_QUERY,
      ...opts.config,
      // Each route compiles on its first request: most tests call a few of a few hundred routes
      // (test/edge/compile-routes.test.ts compiles them all). A test may ask for a start that does.
      http: { compileAtStart: false, ...(opts.config?.http as Record<string, unknown> | undefined) },
    },
  });
  t.teardown(() => app.close());
  return app;
}

/** Creates an organisation directly in the store (the auth module does this through signup). */
export async function createOrg(app: RunningApp, orgId: string, displayName = orgId): Promise<void> {
  await app.deps.store.commit(
    new WriteBatch().putOrg({ orgId, displayName, createdate: new Date().toISOString() }),
  );
}

export function tokenFor(app: RunningApp, p: Partial<Principal> & { org: string }): string {
  return app.deps.tokens.signAccess({
    sub: p.sub ?? 'user-1',
    org: p.org,
    roles: p.roles ?? (p.kind === 'customer' ? [] : ['User']),
    kind: p.kind ?? 'staff',
    email: p.email ?? 'staff@example.com',
    ...(p.customerId ? { customerId: p.customerId } : {}),
  });
}

/**
 * A customer token of an account that proved its address (actors/auth/email-proof.ts), its records
 * written as the auth area writes them: only such an account is matched to things by email.
 */
export async function provenCustomerToken(app: RunningApp, tenant: string, email: string, customerId: string): Promise<string> {
  const { newRecord } = await import('../../core/store/record.js');
  const e = email.toLowerCase();
  await app.deps.store.commit(
    new WriteBatch()
      .putRecord(newRecord(tenant, 'customer', { email: e, status: 'active' }, { sk: customerId }), 0)
      .putRecord(newRecord(tenant, 'user_security', { subjectType: 'customer', emailProven: e }, { sk: customerId }), 0),
  );
  return tokenFor(app, { org: tenant, kind: 'customer', sub: customerId, customerId, email });
}

export function staffHeaders(app: RunningApp, org: string, roles: string[] = ['User']): Record<string, string> {
  return { orgid: org, authorization: `Bearer ${tokenFor(app, { org, roles })}` };
}
