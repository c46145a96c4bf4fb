// The project's TypeScript sources, for the tests that check the house's shape by reading them
// (test/core/layers.test.ts and its neighbours: refusals, edge reads, edge asks).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** The `.ts` files at a root-relative path: the file itself, or every one under the directory. */
export function sources(path: string): string[] {
  if (!statSync(join(root, path)).isDirectory()) return [path];
  const out: string[] = [];
  for (const name of readdirSync(join(root, path)).sort()) {
    const rel = join(path, name);
    if (statSync(join(root, rel)).isDirectory()) out.push(...sources(rel));
    else if (name.endsWith('.ts')) out.push(rel);
  }
  return out;
}

const texts = new Map<string, string>();

/** A source file's text (root-relative path), read once. */
export function source(file: string): string {
  let s = texts.get(file);
  if (s === undefined) texts.set(file, (s = readFileSync(join(root, file), 'utf8')));
  return s;
}
