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

/**
 * The keys a value is indexed under. An array is indexed under its elements and the elements of
 * its nested arrays one level down: mingo's equality matches an element of a nested array
 * (`{tags: 1}` matches `[[1, 2]]`), and the index must hold every record a filter can match.
 * -0 is indexed as 0: they are equal to a filter, and ordered-binary sorts -0 after Infinity.
 */
export function indexValues(v: unknown): IndexValue[] {
  if (Array.isArray(v)) {
    const out: IndexValue[] = [];
    for (const x of v) {
      if (Array.isArray(x)) {
        for (const y of x) if (!Array.isArray(y)) out.push(...scalarKeys(y));
      } else out.push(...scalarKeys(x));
    }
    return out;
  }
  return scalarKeys(v);
}

function scalarKeys(v: unknown): IndexValue[] {
  if (typeof v === 'string') return [indexString(v)];
  if (typeof v === 'number') return Number.isNaN(v) ? [] : [v === 0 ? 0 : v];
  if (typeof v === 'boolean') return [v ? '\u0001true' : '\u0001false'];
  return [];
}

/** The one scalar key a filter's value is looked up under, or undefined when the index cannot answer it. */
export function lookupKey(v: unknown): IndexValue | undefined {
  if (typeof v !== 'string' && typeof v !== 'boolean' && !(typeof v === 'number' && !Number.isNaN(v))) return undefined;
  return scalarKeys(v)[0];
}

/**
 * Where a range of strings starts in the index: a string longer than the kept prefix is stored
 * under its first INDEX_PREFIX_CHARS characters, so the range starts at the bound's own prefix
 * (inclusive; the filter decides). Undefined when index order could differ from the filter's:
 * the index orders strings by code point, mingo by UTF-16 unit, and the two agree whenever one
 * side has no character at or above U+D800.
 */
export function stringRangeKey(bound: string): string | undefined {
  for (let i = 0; i < bound.length; i++) if (bound.charCodeAt(i) >= 0xd800) return undefined;
  return bound.length <= INDEX_PREFIX_CHARS ? bound : bound.slice(0, INDEX_PREFIX_CHARS);
}

/**
 * Whether a string's key names it alone: shorter than every kept prefix of a long string, and not
 * one of the keys booleans are stored under.
 */
export function exactStringKey(v: string): boolean {
  return v.length < INDEX_PREFIX_CHARS && !v.startsWith('\u0001');
}

/** Whether an upper bound can itself be a key (a longer one reads to the end of the strings). */
export function fitsKey(bound: string): boolean {
  return bound.length <= INDEX_PREFIX_CHARS || Buffer.byteLength(bound, 'utf8') <= INDEX_STRING_MAX_BYTES;
}
