// Partial update (spec: Resources → Request bodies): a flat key map applied verbatim as a set.
// Keys are full paths from the record root, so `data.productItems` sets inside `data` while
// `productItems` lands at the record root, as the spec warns. Identity and bookkeeping fields of
// the envelope are not settable this way.
import { appError } from '../../core/errors.js';
import type { StoredRecord } from '../../core/store/record.js';

/** Envelope fields a partial update may not set (`state` and `data` may be set). */
const FIXED = new Set(['pk', 'sk', 'datatype', 'version', 'createdate', 'modifydate']);
const UNSAFE_SEGMENT = new Set(['__proto__', 'constructor', 'prototype']);
const INDEX = /^(0|[1-9]\d{0,4})$/;
export const MAX_PARTIAL_KEYS = 200;

/** Throws 400 for a key map that cannot be applied, naming the key. */
export function assertPartialKeys(set: Record<string, unknown>): void {
  const keys = Object.keys(set);
  if (keys.length === 0) throw appError('ERR_VALIDATION', 'body must set at least one key');
  if (keys.length > MAX_PARTIAL_KEYS) throw appError('ERR_VALIDATION', `body may set at most ${MAX_PARTIAL_KEYS} keys`);
  for (const key of keys) {
    const parts = key.split('.');
    if (parts.some((p) => p === '' || UNSAFE_SEGMENT.has(p) || p.startsWith('$'))) {
      throw appError('ERR_VALIDATION', `body/${key} is not a valid field path`);
    }
    if (FIXED.has(parts[0])) throw appError('ERR_VALIDATION', `body/${key}: ${parts[0]} is set by the service`);
    if (key === 'data' && (set[key] === null || typeof set[key] !== 'object' || Array.isArray(set[key]))) {
      throw appError('ERR_VALIDATION', 'body/data must be an object');
    }
    if (key === 'state' && typeof set[key] !== 'string') throw appError('ERR_VALIDATION', 'body/state must be a string');
  }
}

function clone<T>(v: T): T {
  return structuredClone(v);
}

/** Sets `arr[i]`, padding any gap with null as MongoDB does. */
function setAt(arr: unknown[], i: number, v: unknown): void {
  while (arr.length < i) arr.push(null);
  arr[i] = v;
}

/** A copy of `rec` with every key of `set` assigned at its path (MongoDB `$set` semantics). */
export function applyPartial(rec: StoredRecord, set: Record<string, unknown>): StoredRecord {
  const out = clone(rec);
  for (const [key, value] of Object.entries(set)) {
    const parts = key.split('.');
    let cur: Record<string, unknown> | unknown[] = out;
    for (let i = 0; i < parts.length - 1; i++) {
      const p = parts[i];
      const next: unknown = Array.isArray(cur) ? (INDEX.test(p) ? cur[Number(p)] : undefined) : cur[p];
      if (next === undefined || next === null) {
        if (Array.isArray(cur) && !INDEX.test(p)) throw appError('ERR_VALIDATION', `body/${key}: ${parts.slice(0, i).join('.')} is an array`);
        const created: Record<string, unknown> = {};
        if (Array.isArray(cur)) setAt(cur, Number(p), created);
        else cur[p] = created;
        cur = created;
      } else if (typeof next === 'object') {
        cur = next as Record<string, unknown> | unknown[];
      } else {
        throw appError('ERR_VALIDATION', `body/${key}: ${parts.slice(0, i + 1).join('.')} is not an object`);
      }
    }
    const last = parts[parts.length - 1];
    if (Array.isArray(cur)) {
      if (!INDEX.test(last)) throw appError('ERR_VALIDATION', `body/${key}: ${parts.slice(0, -1).join('.')} is an array`);
      setAt(cur, Number(last), clone(value));
    } else {
      cur[last] = clone(value);
    }
  }
  return out;
}
