// Bounds on every document a client hands us (JSON bodies, socket payloads): nesting depth, keys
// per object, items per array and string length, and no key that names a JavaScript object
// internal. Checked before the document reaches a handler, so nothing downstream (validation,
// msgpack encoding, mingo, a recursive walk) ever meets a document it could choke on. The depth
// default is DynamoDB's (32); MongoDB's is 100.
import { AppError } from './errors.js';

export interface DocumentLimits {
  /** Levels of objects and arrays, the outermost counting as 1. */
  maxDepth: number;
  maxKeys: number;
  maxItems: number;
  /** UTF-16 code units, as `string.length` counts them. */
  maxStringLength: number;
}

export const DEFAULT_DOCUMENT_LIMITS: DocumentLimits = { maxDepth: 32, maxKeys: 1000, maxItems: 10_000, maxStringLength: 100_000 };

/** Keys that reach an object's prototype when assigned or merged; never a business field. */
const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

export function isForbiddenKey(key: string): boolean {
  return FORBIDDEN_KEYS.has(key);
}

/** A key or dotted path one of whose segments is a forbidden key (`data.__proto__.x`). */
export function hasForbiddenSegment(path: string): string | undefined {
  if (FORBIDDEN_KEYS.has(path)) return path;
  if (!path.includes('.')) return undefined;
  for (const part of path.split('.')) if (FORBIDDEN_KEYS.has(part)) return part;
  return undefined;
}

const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

function tooDeep(where: string, limits: DocumentLimits): AppError {
  return new AppError('ERR_DOCUMENT_LIMIT', [`${where} is nested more than ${limits.maxDepth} levels (JSON_MAX_DEPTH)`]);
}

/**
 * The nesting depth of raw JSON text, counted without parsing (brackets outside strings), stopping
 * at the first byte past the limit: a 5,000-level body is refused before JSON.parse recurses.
 */
export function assertJsonDepth(raw: Uint8Array, limits: DocumentLimits, where = 'body'): void {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i];
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) inString = true;
    else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (++depth > limits.maxDepth) throw tooDeep(where, limits);
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) depth--;
  }
}

/**
 * Checks a parsed document against the limits; throws a 400 naming the path and the limit. The
 * walk is recursive but bounded by maxDepth, which it checks before descending.
 */
export function assertDocument(value: unknown, limits: DocumentLimits, where = 'body'): void {
  walk(value, limits, { where, segments: [] }, 1);
}

/**
 * Where the walk is: the path is joined only for an error, so a document within the limits (every
 * one but a hostile few) costs no string per key.
 */
interface Place {
  where: string;
  segments: Array<string | number>;
}

function pathOf(p: Place, last?: string | number): string {
  const all = last === undefined ? p.segments : [...p.segments, last];
  return all.length === 0 ? p.where : `${p.where}/${all.join('/')}`;
}

function walk(v: unknown, limits: DocumentLimits, p: Place, depth: number): void {
  if (typeof v === 'string') {
    if (v.length > limits.maxStringLength) {
      throw new AppError('ERR_DOCUMENT_LIMIT', [`${pathOf(p)} is ${v.length} characters long; at most ${limits.maxStringLength} are allowed (JSON_MAX_STRING_LENGTH)`]);
    }
    return;
  }
  if (v === null || typeof v !== 'object') return;
  if (depth > limits.maxDepth) throw tooDeep(pathOf(p), limits);
  if (Array.isArray(v)) {
    if (v.length > limits.maxItems) {
      throw new AppError('ERR_DOCUMENT_LIMIT', [`${pathOf(p)} has ${v.length} items; at most ${limits.maxItems} are allowed (JSON_MAX_ITEMS)`]);
    }
    for (let i = 0; i < v.length; i++) {
      const item = v[i];
      // Scalars other than strings cannot break a limit: no descent.
      if (item === null || (typeof item !== 'object' && typeof item !== 'string')) continue;
      p.segments.push(i);
      walk(item, limits, p, depth + 1);
      p.segments.pop();
    }
    return;
  }
  let keys = 0;
  for (const k in v) {
    if (++keys > limits.maxKeys) {
      throw new AppError('ERR_DOCUMENT_LIMIT', [`${pathOf(p)} has more than ${limits.maxKeys} keys (JSON_MAX_KEYS)`]);
    }
    const bad = hasForbiddenSegment(k);
    if (bad !== undefined) throw new AppError('ERR_FORBIDDEN_KEY', [pathOf(p, k), bad]);
    if (k.length > limits.maxStringLength) {
      throw new AppError('ERR_DOCUMENT_LIMIT', [`a key in ${pathOf(p)} is ${k.length} characters long; at most ${limits.maxStringLength} are allowed (JSON_MAX_STRING_LENGTH)`]);
    }
    const item = (v as Record<string, unknown>)[k];
    if (item === null || (typeof item !== 'object' && typeof item !== 'string')) continue;
    p.segments.push(k);
    walk(item, limits, p, depth + 1);
    p.segments.pop();
  }
}

/** Levels of objects and arrays in `v` (a scalar has none), counted no further than `cap`. */
function depthOf(v: unknown, cap: number): number {
  if (v === null || typeof v !== 'object' || cap <= 0) return 0;
  let deepest = 0;
  for (const k in v) {
    const item = (v as Record<string, unknown>)[k];
    if (item !== null && typeof item === 'object') deepest = Math.max(deepest, depthOf(item, cap - 1));
    if (deepest >= cap - 1) break;
  }
  return 1 + deepest;
}

/**
 * A dotted path (a partial update's key, from the record root) puts its value one level down per
 * segment: the segments count against maxDepth with the value's own levels, so `a.b.c` set to
 * `{x: 1}` reaches level 4. Throws a 400 naming the path when the record would pass maxDepth.
 */
export function assertPathDepth(path: string, value: unknown, limits: DocumentLimits, where = 'body'): void {
  let segments = 1;
  for (let i = path.indexOf('.'); i !== -1 && segments <= limits.maxDepth; i = path.indexOf('.', i + 1)) segments++;
  const levels = segments + depthOf(value, limits.maxDepth + 1);
  if (levels <= limits.maxDepth) return;
  const shown = path.length > 64 ? path.slice(0, 64) + '…' : path;
  const counted = segments > limits.maxDepth ? `more than ${limits.maxDepth}` : String(levels);
  throw new AppError('ERR_DOCUMENT_LIMIT', [
    `${where}/${shown} would nest the record ${counted} levels deep; at most ${limits.maxDepth} are allowed (JSON_MAX_DEPTH), and each segment of a dotted path counts as a level`,
  ]);
}

/** JSON.parse under the limits: depth from the raw bytes first, then the parsed document. */
export function parseBoundedJson(raw: Buffer, limits: DocumentLimits, where = 'body'): unknown {
  assertJsonDepth(raw, limits, where);
  let body: unknown;
  try {
    body = JSON.parse(raw.toString('utf8'));
  } catch (e) {
    throw new AppError('ERR_INVALID_JSON', [(e as Error).message]);
  }
  assertDocument(body, limits, where);
  return body;
}
