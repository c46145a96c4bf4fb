// A request's input as its route declared it: path parameters decoded, the query parsed, the body
// checked against the content types the route consumes and parsed within the document limits.
import { isUtf8 } from 'node:buffer';
import { parseBoundedJson, type DocumentLimits } from '../../core/document-limits.js';
import { AppError } from '../../core/errors.js';
import type { RouteDef } from '../route.js';
import { JSON_TYPE } from './answer-headers.js';

export function parseQuery(q: string): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  if (!q) return out;
  for (const [k, v] of new URLSearchParams(q)) {
    const prev = out[k];
    if (prev === undefined) out[k] = v;
    else if (Array.isArray(prev)) prev.push(v);
    else out[k] = [prev, v];
  }
  return out;
}

export function decodeParam(v: string): string {
  if (!v.includes('%')) return v;
  try {
    return decodeURIComponent(v);
  } catch {
    throw new AppError('ERR_BAD_REQUEST', ['a path parameter is not valid percent-encoding']);
  }
}

/** The parsed JSON body; undefined when there is none or the route consumes it raw (ctx.rawBody). */
export function parseBody(def: RouteDef, headers: Record<string, string>, raw: Buffer | undefined, limits: DocumentLimits): unknown {
  if (!raw || raw.length === 0) return undefined;
  const type = (headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
  const accepts = def.consumes ?? [JSON_TYPE];
  if (type && !accepts.includes(type) && !(type.endsWith('+json') && accepts.includes(JSON_TYPE))) {
    throw new AppError('ERR_UNSUPPORTED_MEDIA_TYPE', [accepts.join(' or ')]);
  }
  if (!type || type === JSON_TYPE || type.endsWith('+json')) {
    if (!isUtf8(raw)) throw new AppError('ERR_INVALID_JSON', ['it is not valid UTF-8']);
    return parseBoundedJson(raw, limits);
  }
  return undefined;
}
