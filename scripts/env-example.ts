// Writes .env.example from the server's own table of environment variables (core/config.ts), their
// defaults (config/default.json) and descriptions (config/schema.json): `npm run env-example`.
import { readFileSync } from 'node:fs';
import { ENV_VARIABLES } from '../core/config.js';
const defaults = JSON.parse(readFileSync(new URL('../config/default.json', import.meta.url), 'utf8'));
const schema = JSON.parse(readFileSync(new URL('../config/schema.json', import.meta.url), 'utf8'));
const get = (o: any, path: readonly string[]) => path.reduce((a, k) => (a == null ? undefined : a[k]), o);
const desc = (path: readonly string[]) => {
  let s: any = schema;
  for (const k of path) s = s?.properties?.[k] ?? (s?.additionalProperties && typeof s.additionalProperties === 'object' ? s.additionalProperties : undefined);
  return (s?.description as string | undefined)?.replace(/\s*\(env [A-Z_, ]+\)/, '') ?? '';
};
const groups = new Map<string, string[]>();
for (const { name, path } of ENV_VARIABLES) {
  const g = path.length > 1 ? path[0] : 'server';
  const v = get(defaults, path);
  const shown = v === null || v === undefined ? '' : Array.isArray(v) ? v.join(',') : String(v);
  const d = desc(path);
  const lines = groups.get(g) ?? [];
  if (d) lines.push(`# ${d}`);
  lines.push(`# ${name}=${shown}`);
  groups.set(g, lines);
}
const out = ['# Every environment variable the server reads, with its default (config/default.json).',
  '# Uncomment and change what you need; an invalid value stops start-up with a message naming it.',
  '# `npm start` does not read this file: export the variables, or use `node --env-file=.env scripts/start.mjs`.', ''];
for (const [g, lines] of groups) out.push(`## ${g}`, ...lines, '');
process.stdout.write(out.join('\n'));
