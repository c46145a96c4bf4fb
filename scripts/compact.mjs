// `npm run compact [-- <data dir>]`: compacts the store (default: DATA_DIR, else ./data) in place,
// so that commits stop paying for the free list bulk writes leave behind. Stop the server first.
import { resolve, join } from 'node:path';
import { ensureBuilt, root } from './ensure-built.mjs';

const entry = join(root, 'dist', 'core', 'store', 'compact.js');
ensureBuilt(entry);
const { compactInPlace } = await import(entry);
const dir = resolve(process.argv[2] ?? process.env.DATA_DIR ?? './data');
try {
  const r = await compactInPlace(dir);
  const total = Object.values(r.entries).reduce((a, b) => a + b, 0);
  console.log(`compacted ${dir}: ${total} entries; ${r.pagesBefore} pages → ${r.pagesAfter}, free pages ${r.freePagesBefore} → ${r.freePagesAfter}`);
  console.log(`the old file is ${r.kept}: remove it once the server runs well on the new one`);
} catch (err) {
  console.error(`compact: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
}
