// A cluster node's store keeps each tenant it holds in an LMDB environment of its own
// (core/cluster/tenant-envs.ts): writes land there in order even while it opens, a copy of it is
// one file another node installs whole, dropping it deletes its directory, a restart finds it, a
// query worker follows a replacement, keys an older version left in the platform's environment
// are cleared, and environments left unflushed by a machine that went down are dropped.
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { cp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { TenantEnvs } from '../../core/cluster/tenant-envs.js';
import { LmdbStore } from '../../core/store/lmdb-store.js';
import { WriteBatch } from '../../core/store/store.js';
import { thingRecord } from '../helpers/cluster-node.js';

function tempDir(t: Test): string {
  const dir = mkdtempSync(join(tmpdir(), 'bp-tenant-envs-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

async function openEnvs(t: Test, dir = tempDir(t), follow = false): Promise<TenantEnvs> {
  const envs = await TenantEnvs.open({ dataDir: dir, platform: new LmdbStore({ path: dir, mapSizeGiB: 1 }), env: {}, follow });
  t.teardown(() => envs.close());
  return envs;
}

/** `n` conditional writes of record `sk` (versions 1..n), each with its stream mark, all sent at once. */
function writeVersions(envs: TenantEnvs, tenant: string, sk: string, n: number, from = 1): Promise<boolean[]> {
  const sent: Promise<boolean>[] = [];
  for (let v = 1; v <= n; v++) sent.push(envs.commitApplied(new WriteBatch().putRecord(thingRecord(tenant, sk, v), v - 1), { key: tenant, seq: from + v - 1, n: 1 }));
  return Promise.all(sent);
}

/** A copy made by backupTenant, as a takeover receives it: into a directory of `envs.receiving()`. */
async function received(envs: TenantEnvs, copyDir: string): Promise<string> {
  const into = envs.receiving();
  await cp(copyDir, into, { recursive: true });
  return into;
}

t.test('tenant environments - writes sent while a tenant\'s environment opens land in the order they were sent', async (t) => {
  const envs = await openEnvs(t);
  t.same(await writeVersions(envs, 'acme', 'k', 6), [true, true, true, true, true, true], 'each applied, none refused as out of order');
  t.equal(envs.getRecord('acme', 'thing', 'k')?.version, 6);
  t.same(envs.appliedMark('acme'), [6, 1]);
  // And the platform's marks stay in the platform's environment.
  await envs.commitApplied(new WriteBatch().putOrg({ orgId: 'acme', displayName: 'Acme', createdate: '' }), { key: '_g', seq: 7, n: 1 });
  t.same(envs.appliedMark('_g'), [7, 1]);
  t.equal(envs.getOrg('acme')?.displayName, 'Acme');
});

t.test('tenant environments - each tenant in a directory of its own; the platform\'s environment holds none of their keys', async (t) => {
  const dir = tempDir(t);
  const envs = await openEnvs(t, dir);
  await writeVersions(envs, 'acme', 'a', 3);
  await writeVersions(envs, 'globex', 'g', 2, 10);
  t.same(readdirSync(join(dir, 'tenants')).filter((n) => !n.startsWith('.')).sort(), ['acme', 'globex']);
  t.equal(envs.platform.getRecord('acme', 'thing', 'a'), undefined, 'the platform\'s environment has no record of acme');
  t.ok(envs.measureRecordBytes('acme') > 0, 'acme\'s own does');
  t.equal(envs.getRecord('globex', 'thing', 'a'), undefined, 'no tenant reads another\'s');
  t.equal(envs.getRecord('initech', 'thing', 'a'), undefined, 'a tenant not held here reads as empty');
  t.same(envs.tenants().sort(), ['acme', 'globex']);

  // Dropped: its directory goes; the others stay.
  t.equal(await envs.clearTenantSome('acme', 1000), 0, 'nothing left to clear');
  t.notOk(existsSync(join(dir, 'tenants', 'acme')), 'acme\'s directory is gone');
  t.equal(envs.getRecord('acme', 'thing', 'a'), undefined);
  t.notOk(envs.hasAppliedMark('acme'));
  t.equal(envs.getRecord('globex', 'thing', 'g')?.version, 2);
});

t.test('tenant environments - a copy is one file another node installs whole; a copy of another mark is refused', async (t) => {
  const a = await openEnvs(t);
  const b = await openEnvs(t);
  await a.declareIndex('thing', 'data.sk');
  await b.declareIndex('thing', 'data.sk');
  await writeVersions(a, 'acme', 'k', 4);
  for (let i = 0; i < 50; i++) await a.commitApplied(new WriteBatch().putRecord(thingRecord('acme', `r${i}`, 1), 0).putKv('acme', 'ns', `k${i}`, { i }), { key: 'acme', seq: 100 + i, n: 1 });
  const copy = await a.backupTenant('acme');
  t.ok(copy, 'a copy of acme');
  t.same(copy!.mark, [149, 1], 'holding the mark of its last write');
  t.ok(copy!.entries >= 55 && copy!.bytes > 0, `${copy!.entries} keys in ${copy!.bytes} bytes`);

  // b holds an older copy of acme: the install replaces it.
  await writeVersions(b, 'acme', 'k', 2);
  const bad = await received(b, copy!.dir);
  await t.rejects(b.installTenant('acme', bad, [150, 1]), /holds mark 149\/1, its manifest says 150\/1/, 'a file that does not hold the manifest\'s mark is refused');
  t.equal(b.getRecord('acme', 'thing', 'k')?.version, 2, 'and what b held stays');

  const into = await received(b, copy!.dir);
  a.discard(copy!.dir);
  await b.installTenant('acme', into, [149, 1]);
  t.equal(b.getRecord('acme', 'thing', 'k')?.version, 4);
  t.same(b.find('acme', 'thing', { 'data.sk': 'r7' }).data.map((r) => r.sk), ['r7'], 'its indexes came with it');
  t.same(b.getKv('acme', 'ns', 'k49'), { i: 49 });
  t.same(b.appliedMark('acme'), [149, 1]);
  t.equal(b.digest().split(',')[1], a.digest().split(',')[1], 'the same keys and values as on a');
  // It goes on taking writes after the install.
  await b.commitApplied(new WriteBatch().putRecord(thingRecord('acme', 'k', 5), 4), { key: 'acme', seq: 150, n: 1 });
  t.equal(b.getRecord('acme', 'thing', 'k')?.version, 5);
});

t.test('tenant environments - a restart finds its tenants; a query worker follows a tenant installed anew', async (t) => {
  const dir = tempDir(t);
  let envs = await TenantEnvs.open({ dataDir: dir, platform: new LmdbStore({ path: dir, mapSizeGiB: 1 }), env: {} });
  await writeVersions(envs, 'acme', 'k', 3);
  const reader = await openEnvs(t, dir, true);
  t.equal(reader.getRecord('acme', 'thing', 'k')?.version, 3, 'the worker reads the tenant\'s environment');
  await envs.close();

  envs = await TenantEnvs.open({ dataDir: dir, platform: new LmdbStore({ path: dir, mapSizeGiB: 1 }), env: {} });
  t.teardown(() => envs.close());
  t.same(envs.tenants(), ['acme'], 'reopened');
  t.same(envs.appliedMark('acme'), [3, 1]);

  // Replaced by a copy of another node's (here: of itself after more writes, installed as a new generation).
  await envs.commitApplied(new WriteBatch().putRecord(thingRecord('acme', 'k', 4), 3), { key: 'acme', seq: 4, n: 1 });
  const copy = (await envs.backupTenant('acme'))!;
  const into = await received(envs, copy.dir);
  envs.discard(copy.dir);
  await envs.installTenant('acme', into, [4, 1]);
  t.equal(readdirSync(join(dir, 'tenants', 'acme')).length, 1, 'one generation on disk: the one it replaced was deleted');
  reader.resetReadTxn();
  t.equal(reader.getRecord('acme', 'thing', 'k')?.version, 4, 'the worker reads the new generation after its next reset');
});

t.test('tenant environments - keys of a tenant an older version kept in the platform\'s environment are cleared once the tenant has its own', async (t) => {
  const dir = tempDir(t);
  const old = new LmdbStore({ path: dir, mapSizeGiB: 1 });
  for (let i = 0; i < 3; i++) await old.commitApplied(new WriteBatch().putRecord(thingRecord('acme', `old${i}`, 1), 0), { key: 'acme', seq: i + 1, n: 1 });
  await old.close();

  const envs = await openEnvs(t, dir);
  t.ok(envs.appliedKeys().includes('acme'), 'the older copy shows among what this node holds (so an unheld one is dropped)');
  t.equal(envs.getRecord('acme', 'thing', 'old0'), undefined, 'and is never read');
  t.notOk(envs.hasAppliedMark('acme'), 'acme counts as not held: a takeover rebuilds it');
  await writeVersions(envs, 'acme', 'k', 1, 10);
  for (let i = 0; i < 100 && envs.platform.hasAppliedMark('acme'); i++) await new Promise((r) => setTimeout(r, 20));
  t.notOk(envs.platform.hasAppliedMark('acme'), 'the older copy\'s mark is gone');
  t.equal(envs.platform.measureRecordBytes('acme'), 0, 'and its keys');
  t.equal(envs.getRecord('acme', 'thing', 'k')?.version, 1);
});

t.test('tenant environments - unflushed per commit: a restart in the same boot keeps them; one in another boot drops them unless they were closed', async (t) => {
  const dir = tempDir(t);
  const open = (bootId: string | null) => TenantEnvs.open({ dataDir: dir, platform: new LmdbStore({ path: dir, mapSizeGiB: 1 }), env: {}, bootId });
  let envs = await open('boot-1');
  t.ok(envs.unflushed, 'with a boot id, tenant environments are not flushed per commit');
  await writeVersions(envs, 'acme', 'k', 2);
  // Killed (no close): the platform store is let go without closing the tenants.
  await envs.platform.close();

  envs = await open('boot-1');
  t.same(envs.tenants(), ['acme'], 'the same boot (a killed process): acme is kept');
  t.equal(envs.getRecord('acme', 'thing', 'k')?.version, 2);
  await envs.close();
  t.ok(existsSync(join(dir, 'tenants', '.clean')), 'a clean close is written down');

  envs = await open('boot-2');
  t.same(envs.tenants(), ['acme'], 'another boot after a clean close: kept (they were flushed at close)');
  t.notOk(existsSync(join(dir, 'tenants', '.clean')), 'and the mark is gone while they are open');
  await writeVersions(envs, 'acme', 'k2', 1, 10);
  await envs.platform.close();

  envs = await open('boot-3');
  t.teardown(() => envs.close());
  t.same(envs.tenants(), [], 'another boot without a close (the machine went down): every tenant environment is dropped');
  t.notOk(existsSync(join(dir, 'tenants', 'acme')), 'its directory too');
  t.notOk(envs.hasAppliedMark('acme'), 'so a takeover rebuilds acme from its snapshot and the stream');

  const other = tempDir(t);
  const flushed = await TenantEnvs.open({ dataDir: other, platform: new LmdbStore({ path: other, mapSizeGiB: 1 }), env: {}, bootId: null });
  t.teardown(() => flushed.close());
  t.notOk(flushed.unflushed, 'without a boot id they are flushed per commit');
});

t.test('tenant environments - a copy or a reception that would take the disk below its floor is not made', async (t) => {
  const dir = tempDir(t);
  // A floor no disk has room above: every copy and reception would cross it.
  const envs = await TenantEnvs.open({ dataDir: dir, platform: new LmdbStore({ path: dir, mapSizeGiB: 1, minFreeDiskBytes: Number.MAX_SAFE_INTEGER }), env: {} });
  t.teardown(() => envs.close());
  await writeVersions(envs, 'acme', 'k', 2);
  t.equal(await envs.backupTenant('acme'), undefined, 'no snapshot copy: the snapshot waits');
  t.same(readdirSync(join(dir, 'tenants', '.work')), [], 'and nothing was written');
  t.throws(() => envs.receiving(1000), { code: 'ERR_INSUFFICIENT_STORAGE', statusCode: 507 }, 'a takeover does not receive a file the disk has no room for');

  const roomy = await openEnvs(t);
  await writeVersions(roomy, 'acme', 'k', 2);
  const copy = await roomy.backupTenant('acme');
  t.ok(copy, 'with room, the copy is made');
  roomy.discard(copy!.dir);
});
