// A real LMDB store in a temp directory whose commits land only when the test lets them: for
// tests of what the actor runtime answers, and when, while writes are still in flight.
import { LmdbStore } from '../../core/store/lmdb-store.js';
import type { WriteBatch } from '../../core/store/store.js';
import { tempDir } from './app.js';

export function gatedStore(tt: Parameters<typeof tempDir>[0]) {
  const store = new LmdbStore({ path: tempDir(tt), mapSizeGiB: 1 });
  const held: Array<() => void> = [];
  let holding = false;
  const commit = store.commit.bind(store);
  store.commit = (b: WriteBatch) => (holding ? new Promise<void>((r) => held.push(r)).then(() => commit(b)) : commit(b));
  return { store, hold: () => (holding = true), release: () => { holding = false; for (const r of held.splice(0)) r(); } };
}
