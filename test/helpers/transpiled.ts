// The server's sources as plain JavaScript, for tests that start it as a child process many times
// (crash safety, cluster nodes). Through a TypeScript loader every child transforms the whole
// project again (~12 s per start on a loaded 2-core machine); from the transpiled tree
// (scripts/test-tree.mjs, the one npm test runs in) a start takes 2-4 s.
import { join } from 'node:path';
import { buildTree, root } from '../../scripts/test-tree.mjs';

/** The directory holding the transpiled tree (root-relative paths, `.ts` → `.js`). */
export function transpiledRoot(): string {
  // Already running as JavaScript (npm test runs in the tree): it is the tree.
  if (import.meta.url.endsWith('.js')) return root;
  return buildTree();
}

/** The transpiled path of a root-relative TypeScript file, e.g. `edge/main.ts`. */
export function transpiled(rel: string): string {
  return join(transpiledRoot(), rel.replace(/\.ts$/, '.js'));
}
