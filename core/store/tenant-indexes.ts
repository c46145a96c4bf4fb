// Indexes an organisation declares on its own datatypes (issue 33): what one is, which paths may
// be indexed, and the values a record holds at a path. Each is built in the background
// (lmdb-tenant-indexes.ts), kept in every write's transaction like a module's index, used by the
// planner once built, and seen and used by its organisation only.
import { AppError } from '../errors.js';

export type TenantIndexState = 'building' | 'ready' | 'failed';

/** An index as the API answers it. */
export interface TenantIndex {
  id: string;
  datatype: string;
  path: string;
  unique: boolean;
  state: TenantIndexState;
  progress: { done: number; total: number };
  createdAt: string;
  readyAt?: string;
  /** Why a build failed (a unique index over data that holds duplicates). */
  reason?: string;
}

/** A module's index, listed beside the organisation's own (read-only). */
export interface BuiltInIndex {
  datatype: string;
  path: string;
  builtIn: true;
}

export interface TenantIndexSpec {
  datatype: string;
  path: string;
  unique?: boolean;
}

/** Segments of an indexed path, the `data.` prefix included: as deep as any filter needs. */
export const MAX_INDEX_PATH_SEGMENTS = 8;
export const MAX_INDEX_PATH_LENGTH = 200;
const SEGMENT = /^[A-Za-z0-9_-]+$/;
const NUMERIC = /^\d+$/;
const FORBIDDEN = new Set(['__proto__', 'constructor', 'prototype']);

/**
 * Refuses (400) a path an organisation cannot index: business fields only (`data.…`), the
 * characters of field paths elsewhere, bounded length and depth, no array position (`data.items.0`:
 * index `data.items.sku`, which matches any element as a filter does).
 */
export function assertIndexPath(path: string): void {
  const bad = (why: string) => new AppError('ERR_VALIDATION', [`path "${path.length > 64 ? path.slice(0, 64) + '…' : path}": ${why}`]);
  if (path.length > MAX_INDEX_PATH_LENGTH) throw bad(`at most ${MAX_INDEX_PATH_LENGTH} characters`);
  const parts = path.split('.');
  if (parts[0] !== 'data' || parts.length < 2) throw bad('an index is on a business field: `data.<field>` (dotted for nested fields)');
  if (parts.length > MAX_INDEX_PATH_SEGMENTS) throw bad(`at most ${MAX_INDEX_PATH_SEGMENTS} segments`);
  for (const p of parts) {
    if (!SEGMENT.test(p)) throw bad('each segment is letters, digits, `_` or `-`');
    if (FORBIDDEN.has(p)) throw bad(`the segment "${p}" names a JavaScript object internal`);
    if (NUMERIC.test(p)) throw bad('a numeric segment names an array position, which an index cannot follow; index the field of the elements instead');
  }
}

/**
 * The values a record holds at `path` as a filter sees them (mingo): a segment met on an array
 * goes on into each element, so `data.items.sku` holds every element's `sku`. `crossed` is true
 * when an array was met on the way (or at the end): the index is then multikey.
 */
export function valuesAtPath(obj: unknown, path: string): { values: unknown[]; crossed: boolean } {
  const out: unknown[] = [];
  let crossed = false;
  const parts = path.split('.');
  // Nesting is bounded by the document limits every stored record was held to.
  const walk = (cur: unknown, i: number): void => {
    if (i === parts.length) {
      if (Array.isArray(cur)) crossed = true;
      out.push(cur);
      return;
    }
    if (Array.isArray(cur)) {
      crossed = true;
      for (const el of cur) walk(el, i);
      return;
    }
    if (cur === null || typeof cur !== 'object') return;
    walk((cur as Record<string, unknown>)[parts[i]], i + 1);
  };
  walk(obj, 0);
  return { values: out, crossed };
}

/** The scalars a record holds at `path` (an array's elements, and theirs one level down, as indexValues takes them). */
export function leavesAtPath(obj: unknown, path: string): { leaves: unknown[]; crossed: boolean } {
  const { values, crossed } = valuesAtPath(obj, path);
  const leaves: unknown[] = [];
  for (const v of values) {
    if (!Array.isArray(v)) leaves.push(v);
    else for (const x of v) if (!Array.isArray(x)) leaves.push(x);
    else for (const y of x) if (!Array.isArray(y)) leaves.push(y);
  }
  return { leaves, crossed };
}
