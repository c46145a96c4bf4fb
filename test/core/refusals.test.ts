// One way to refuse, checked on the sources: a refusal is an AppError from the table, thrown, and
// the actor runtime decides what it means for the state (core/actor/runtime.ts). No wrapper class
// carries a refusal as a value, and nobody unwraps one. FailureLimiter (actors/auth/limiter.ts)
// counts failed sign-ins: a rate limiter, not a refusal.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const NOT_A_REFUSAL = new Set(['FailureLimiter']);

function sources(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(join(root, dir))) {
    const rel = join(dir, name);
    if (statSync(join(root, rel)).isDirectory()) out.push(...sources(rel));
    else if (name.endsWith('.ts')) out.push(rel);
  }
  return out;
}

t.test('refusals - no Failure wrapper class in actors/ or core/, and no unwrap of one', async (t) => {
  const found: string[] = [];
  for (const file of ['actors', 'core'].flatMap(sources)) {
    const text = readFileSync(join(root, file), 'utf8');
    for (const m of text.matchAll(/\bclass\s+(\w*Failure)\b/g)) if (!NOT_A_REFUSAL.has(m[1])) found.push(`${file}: class ${m[1]}`);
    for (const m of text.matchAll(/\binstanceof\s+(\w*Failure)\b/g)) if (!NOT_A_REFUSAL.has(m[1])) found.push(`${file}: instanceof ${m[1]}`);
  }
  t.same(found, [], 'a refusal is an AppError, thrown (core/actor/runtime.ts)');
});
