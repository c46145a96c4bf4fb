// One way to refuse, checked on the sources: a refusal is an AppError from the table, thrown, and
// the actor runtime decides what it means for the state (core/actor/runtime.ts). No wrapper class
// carries a refusal as a value, and nobody unwraps one. FailureLimiter (actors/auth/limiter.ts)
// counts failed sign-ins: a rate limiter, not a refusal.
import t from 'tap';
import { source, sources } from '../helpers/sources.js';

const NOT_A_REFUSAL = new Set(['FailureLimiter']);

t.test('refusals - no Failure wrapper class in actors/ or core/, and no unwrap of one', async (t) => {
  const found: string[] = [];
  for (const file of ['actors', 'core'].flatMap(sources)) {
    const text = source(file);
    for (const m of text.matchAll(/\bclass\s+(\w*Failure)\b/g)) if (!NOT_A_REFUSAL.has(m[1])) found.push(`${file}: class ${m[1]}`);
    for (const m of text.matchAll(/\binstanceof\s+(\w*Failure)\b/g)) if (!NOT_A_REFUSAL.has(m[1])) found.push(`${file}: instanceof ${m[1]}`);
  }
  t.same(found, [], 'a refusal is an AppError, thrown (core/actor/runtime.ts)');
});
