// Rewrites a store into a new directory with no LMDB free list, for a store that bulk writes left
// with a large one.
//
// LMDB frees every page a transaction copies. A transaction that rewrites much of a tree (a comp
// of thousands of tickets, an import) therefore leaves a free list as large as what it touched, and
// that list stays: each later transaction takes pages from it and frees as many. Every commit saves
// the list it loaded again, so the door's commits slow down with it: 0.6–0.8× the rate after
// 100,000 tickets imported in 5,000-ticket transactions (bench scenario scan-store), and about a
// hundred commits a second after 1,000,000 imported in 200,000-ticket ones.
//
// lmdb-js's own compacting backup is not used: a store copied by it aborts the process (an LMDB
// assertion in mdb_page_alloc) at the first transaction that rewrites a couple of hundred records.
// This copies every database entry by entry instead, in key order and as raw bytes (msgpack
// structures included, as they live in `meta`), appending in transactions of CHUNK entries: each
// transaction only extends the right edge of its tree, so the copy ends with next to no free pages
// and full leaf pages.
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { open, type Database, type Key, type RootDatabase } from 'lmdb';

const CHUNK = 10_000;

/**
 * A free list worth compacting away: at least this many pages and this share of the file. A store
 * in steady use keeps a few percent free; one after a large import, a third or more.
 */
export const LARGE_FREE_LIST = { pages: 1_000, share: 0.2 };

/** Whether `free` of `total` pages is a free list worth compacting away (see LARGE_FREE_LIST). */
export function largeFreeList(free: number, total: number): boolean {
  return free >= LARGE_FREE_LIST.pages && free >= LARGE_FREE_LIST.share * total;
}

export interface CompactReport {
  /** Entries copied, by database name. */
  entries: Record<string, number>;
  /** Pages on the free list, before and after (a commit saves the part of it LMDB loaded again). */
  freePagesBefore: number;
  freePagesAfter: number;
  /** Size of the data file in pages, before and after. */
  pagesBefore: number;
  pagesAfter: number;
}

function openRoot(path: string, readOnly: boolean): RootDatabase {
  return open({ path, maxDbs: 16, noSubdir: false, readOnly, compression: false, mapSize: 64 * 1024 ** 3 });
}

type TreeStats = { lastPageNumber?: number; treeBranchPageCount?: number; treeLeafPageCount?: number; overflowPages?: number; free?: TreeStats };
const treePages = (s: TreeStats | undefined) => (s?.treeBranchPageCount ?? 0) + (s?.treeLeafPageCount ?? 0) + (s?.overflowPages ?? 0);

/**
 * Pages on the free list, and pages in the file: the file's pages less the two meta pages and the
 * pages every tree is made of (the root, the free list itself, and `databases`: every named one).
 */
export function storePages(root: RootDatabase, databases: Database<unknown, Key>[]): { free: number; total: number } {
  const rootStats = root.getStats() as TreeStats;
  const total = (rootStats.lastPageNumber ?? 0) + 1;
  let inTrees = 2 + treePages(rootStats) + treePages(rootStats.free);
  for (const db of databases) inTrees += treePages(db.getStats() as TreeStats);
  return { free: Math.max(0, total - inTrees), total };
}

/** Every named database of `root`, opened for raw bytes. */
function namedDatabases(root: RootDatabase): Array<[string, Database<unknown, Key>]> {
  // The root database lists the named databases (LmdbStore keeps nothing else in it).
  return [...root.getKeys({})].map(String).map((name) => [name, root.openDB({ name, encoding: 'binary', keyEncoding: 'binary' })]);
}

/**
 * Copies the store at `from` into the empty (or missing) directory `to`. The store must not be
 * open in any process: stop the server first (an open one is refused). `from` is left as it was.
 */
export async function compactStore(from: string, to: string): Promise<CompactReport> {
  if (!existsSync(join(from, 'data.mdb'))) throw new Error(`no store at ${from} (data.mdb is missing)`);
  if (existsSync(to) && readdirSync(to).length > 0) throw new Error(`${to} is not empty`);
  mkdirSync(to, { recursive: true });
  const src = openRoot(from, true);
  try {
    src.readerCheck();
    const others = src
      .readerList()
      .split('\n')
      .map((line) => Number(line.trim().split(/\s+/)[0]))
      .filter((pid) => Number.isInteger(pid) && pid > 0 && pid !== process.pid);
    if (others.length > 0) throw new Error(`the store is open in process ${others[0]}: stop the server first`);
    const sources = namedDatabases(src);
    const before = storePages(src, sources.map(([, db]) => db));
    const dst = openRoot(to, false);
    const entries: Record<string, number> = {};
    try {
      const targets: Database<unknown, Key>[] = [];
      for (const [name, source] of sources) {
        const target = dst.openDB({ name, encoding: 'binary', keyEncoding: 'binary' });
        targets.push(target);
        let n = 0;
        let chunk: Array<[Buffer, Buffer]> = [];
        const flush = () => {
          const batch = chunk;
          chunk = [];
          dst.transactionSync(() => {
            for (const [k, v] of batch) target.putSync(k, v, { append: true });
          });
        };
        for (const { key, value } of source.getRange({})) {
          chunk.push([Buffer.from(key as Buffer), Buffer.from(value as Buffer)]);
          n++;
          if (chunk.length >= CHUNK) flush();
        }
        if (chunk.length > 0) flush();
        entries[name] = n;
      }
      await dst.flushed;
      const after = storePages(dst, targets);
      return { entries, freePagesBefore: before.free, freePagesAfter: after.free, pagesBefore: before.total, pagesAfter: after.total };
    } finally {
      await dst.close();
    }
  } finally {
    await src.close();
  }
}

/** Entries per named database of the store at `path`. */
async function countEntries(path: string): Promise<Record<string, number>> {
  const root = openRoot(path, true);
  try {
    const out: Record<string, number> = {};
    for (const [name, db] of namedDatabases(root)) out[name] = db.getKeysCount({});
    return out;
  } finally {
    await root.close();
  }
}

/**
 * Compacts the store in `dir` in place (`npm run compact`): copies it beside `dir`, checks that the
 * copy holds as many entries in every database as the store, then puts the copy in its place. The
 * old file stays as `data.mdb.before-compact` until the operator removes it.
 */
export async function compactInPlace(dir: string): Promise<CompactReport & { kept: string }> {
  const kept = join(dir, 'data.mdb.before-compact');
  if (existsSync(kept)) throw new Error(`${kept} is still there from an earlier compaction: remove it first`);
  const copy = `${dir}.compacting`;
  // A copy left by an interrupted run is not the store: start again.
  rmSync(copy, { recursive: true, force: true });
  try {
    const report = await compactStore(dir, copy);
    const want = await countEntries(dir);
    const got = await countEntries(copy);
    for (const name of new Set([...Object.keys(want), ...Object.keys(got)])) {
      if (want[name] !== got[name]) throw new Error(`the copy of database ${name} holds ${got[name] ?? 0} entries, the store ${want[name] ?? 0}: nothing was changed`);
    }
    renameSync(join(dir, 'data.mdb'), kept);
    try {
      renameSync(join(copy, 'data.mdb'), join(dir, 'data.mdb'));
    } catch (err) {
      renameSync(kept, join(dir, 'data.mdb'));
      throw err;
    }
    // The lock file describes the old data file's readers and transactions: LMDB makes a new one.
    rmSync(join(dir, 'lock.mdb'), { force: true });
    return { ...report, kept };
  } finally {
    rmSync(copy, { recursive: true, force: true });
  }
}
