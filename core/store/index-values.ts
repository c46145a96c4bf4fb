// What a secondary index stores for a value, and which filter conditions it can answer.

export type IndexValue = string | number;

/**
 * Index keys hold a bounded prefix of strings over 1,000 UTF-8 bytes: LMDB refuses keys over ~2 KB,
 * and the index only narrows candidates (every query filters them again), so a shared prefix costs
 * nothing but a wider range. Writes and lookups go through this one function, so both sides agree.
 */
const INDEX_STRING_MAX_BYTES = 1000;
/** Characters of a long string kept: at most 3 UTF-8 bytes each, so within the byte bound. */
const INDEX_PREFIX_CHARS = Math.floor(INDEX_STRING_MAX_BYTES / 3);

function indexString(v: string): string {
  if (v.length <= INDEX_PREFIX_CHARS || Buffer.byteLength(v, 'utf8') <= INDEX_STRING_MAX_BYTES) return v;
  return v.slice(0, INDEX_PREFIX_CHARS);
}

export function indexValues(v: unknown): IndexValue[] {
  if (typeof v === 'string') return [indexString(v)];
  if (typeof v === 'number') return Number.isNaN(v) ? [] : [v];
  if (typeof v === 'boolean') return [v ? '\u0001true' : '\u0001false'];
  if (Array.isArray(v)) return v.flatMap((x) => (Array.isArray(x) ? [] : indexValues(x)));
  return [];
}

/** An equality the index can answer: `{path: v}`, `{path: {$eq: v}}` or `{path: {$in: [...]}}`. */
export function equalityValues(cond: unknown): IndexValue[] | undefined {
  if (typeof cond === 'string' || typeof cond === 'number' || typeof cond === 'boolean') return indexValues(cond);
  if (cond && typeof cond === 'object' && !Array.isArray(cond)) {
    const keys = Object.keys(cond);
    if (keys.length !== 1) return undefined;
    const c = cond as Record<string, unknown>;
    if (keys[0] === '$eq') return equalityValues(c.$eq);
    if (keys[0] === '$in' && Array.isArray(c.$in)) {
      const out: IndexValue[] = [];
      for (const x of c.$in) {
        const vs = equalityValues(x);
        if (!vs) return undefined;
        out.push(...vs);
      }
      return out;
    }
  }
  return undefined;
}
