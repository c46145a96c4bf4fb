// Shared set-up of the record store tests: a real node with two organisations, staff clients for
// each, and direct store seeding (fast, and the only way to plant records the record store
// itself refuses to write, such as users with credential fields).
import type { Principal } from '../../core/auth/tokens.js';
import { newRecord, type Data, type StoredRecord } from '../../core/store/record.js';
import { WriteBatch } from '../../core/store/store.js';
import type { RunningApp, StartOptions } from '../../edge/app.js';
import { createOrg, startTestApp, staffHeaders, tokenFor } from '../helpers/app.js';
import { client } from '../helpers/http.js';

export const A = 'acme';
export const B = 'globex';

interface Teardown {
  teardown(fn: () => unknown): void;
}

export async function setup(t: Teardown, opts: StartOptions & { dataDir?: string } = {}) {
  const app = await startTestApp(t, opts);
  await createOrg(app, A);
  await createOrg(app, B);
  return {
    app,
    a: client(app.url, staffHeaders(app, A)),
    b: client(app.url, staffHeaders(app, B)),
    as: (p: Partial<Principal> & { org: string }) =>
      client(app.url, { orgid: p.org, authorization: `Bearer ${tokenFor(app, p)}` }),
    anon: (org: string) => client(app.url, { orgid: org }),
  };
}

/** Writes records straight into the store, bypassing every route rule; createdates 1 ms apart. */
export async function seed(
  app: RunningApp,
  tenant: string,
  datatype: string,
  datas: Data[],
  opts: { extra?: Record<string, unknown>; sks?: string[] } = {},
): Promise<StoredRecord[]> {
  const batch = new WriteBatch();
  const base = Date.now();
  const out = datas.map((data, i) => ({
    ...newRecord(tenant, datatype, data, { sk: opts.sks?.[i], now: base + i }),
    ...opts.extra,
  }));
  for (const rec of out) batch.putRecord(rec);
  await app.deps.store.commit(batch);
  return out;
}

export const createBody = (datatype: string, data: Data, extra: Record<string, unknown> = {}) => ({
  datatype,
  data,
  isNew: true,
  version: 0,
  ...extra,
});
