// A job's answer crosses to the main thread, which serializes it: its size is measured first, in
// the worker, so a result that shares one sub-document many times (easy to build with `$reduce`)
// cannot make the main thread write gigabytes of JSON.
import { appError } from '../errors.js';

/** A string's JSON size: UTF-8 bytes, quotes, and the escapes JSON writes (`\u00XX` for control characters). */
function stringBytes(s: string): number {
  let n = Buffer.byteLength(s) + 2;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20) n += 5;
    else if (c === 0x22 || c === 0x5c) n += 1;
  }
  return n;
}

function scalarBytes(v: unknown): number {
  if (typeof v === 'string') return stringBytes(v);
  if (typeof v === 'number') return 24;
  if (v instanceof Date) return 26;
  return 5;
}

/**
 * Throws 400 once the JSON size of `value` passes `limit` bytes (estimated: shared parts counted
 * each time, as JSON repeats them). Depth-first with one frame per open container, so the walk
 * holds no more than the nesting depth and stops as soon as the limit is passed.
 */
export function assertResultSize(value: unknown, limit: number): void {
  let size = 0;
  const frames: Array<{ values: unknown[]; i: number }> = [];
  let next: unknown = value;
  for (;;) {
    if (next !== null && typeof next === 'object' && !(next instanceof Date)) {
      if (Array.isArray(next)) {
        size += 2 + next.length;
        frames.push({ values: next, i: 0 });
      } else {
        const keys = Object.keys(next);
        size += 2;
        for (const k of keys) size += stringBytes(k) + 2;
        frames.push({ values: keys.map((k) => (next as Record<string, unknown>)[k]), i: 0 });
      }
    } else size += scalarBytes(next);
    if (size > limit) {
      throw appError(
        'ERR_QUERY_BUDGET',
        `the answer is larger than ${limit} bytes (QUERY_MAX_RESULT_BYTES); select fewer fields, use a smaller page, or add $limit`,
      );
    }
    while (frames.length > 0 && frames[frames.length - 1].i >= frames[frames.length - 1].values.length) frames.pop();
    if (frames.length === 0) return;
    const top = frames[frames.length - 1];
    next = top.values[top.i++];
  }
}
