// Regexes from clients run on RE2 (re2js, a pure JS port): matching is linear in the input, so no
// pattern can backtrack for seconds the way `^(a+)+$` does on V8's engine. Patterns RE2 cannot
// run linearly (backreferences, lookarounds) are refused with a 400 that says so.
import { evalExpr } from 'mingo/core';
import * as queryOps from 'mingo/operators/query';
import { RE2JS } from 're2js';
import { appError } from '../errors.js';
import { queryLimits } from './limits.js';

/** MongoDB's `$options` letters RE2 supports; `u` is accepted and changes nothing (RE2 is Unicode). */
const FLAGS: Record<string, number> = { i: RE2JS.CASE_INSENSITIVE, m: RE2JS.MULTILINE, s: RE2JS.DOTALL, u: 0 };

const compiled = new Map<string, RE2JS>();

/** Throws 400 unless `pattern` is a string within the length limit and `options` known letters. */
export function assertRegexArgs(pattern: unknown, options: unknown, where: string): void {
  if (typeof pattern !== 'string') throw appError('ERR_VALIDATION', `${where}: the regex must be a string`);
  const max = queryLimits().maxRegexLength;
  if (pattern.length > max) {
    throw appError(
      'ERR_QUERY_BUDGET',
      `${where}: a regex of ${pattern.length} characters is over the limit of ${max} (QUERY_MAX_REGEX_LENGTH); shorten the pattern`,
    );
  }
  if (options === undefined || options === null) return;
  if (typeof options !== 'string') throw appError('ERR_VALIDATION', `${where}: regex options must be a string`);
  for (const c of options) {
    if (!(c in FLAGS)) throw appError('ERR_VALIDATION', `${where}: regex option "${c}" is not supported (supported: i, m, s)`);
  }
}

/** The RE2 program of a client pattern (cached), or a 400 naming why it cannot be run. */
export function linearRegex(pattern: unknown, options: unknown, where = 'regex'): RE2JS {
  assertRegexArgs(pattern, options, where);
  const opts = typeof options === 'string' ? options : '';
  const key = `${opts}/${pattern as string}`;
  let re = compiled.get(key);
  if (re) return re;
  let flags = 0;
  for (const c of opts) flags |= FLAGS[c];
  try {
    re = RE2JS.compile(pattern as string, flags);
  } catch (err) {
    throw appError(
      'ERR_VALIDATION',
      `${where}: /${pattern as string}/ cannot be run in linear time (${(err as Error).message}); backreferences and lookarounds are not supported`,
    );
  }
  if (compiled.size >= 500) compiled.clear();
  compiled.set(key, re);
  return re;
}

type QueryOp = (selector: string, value: unknown, options: unknown) => (obj: unknown) => boolean;

/**
 * The `$regex` query operator on RE2. mingo has already turned `{$regex, $options}` into a native
 * RegExp (constructing one only parses it); its source and flags are run on RE2 instead.
 */
export const $regex: QueryOp = (selector, value, options) => {
  const re = value instanceof RegExp ? linearRegex(value.source, value.flags.replace(/[^ims]/g, ''), '$regex') : linearRegex(value, '', '$regex');
  const like = { exec: (s: string) => (re.test(s) ? [s] : null) };
  return (queryOps.$regex as unknown as QueryOp)(selector, like, options);
};

interface RegexArgs {
  input?: unknown;
  regex?: unknown;
  options?: unknown;
}

interface RegexMatch {
  match: string;
  idx: number;
  captures: Array<string | null>;
}

type ExprOp = (obj: unknown, expr: unknown, options: unknown) => unknown;

function matches(obj: unknown, expr: unknown, options: unknown, global: boolean): RegexMatch[] {
  const val = evalExpr(obj as object, expr, options as never) as RegexArgs;
  if (typeof val?.input !== 'string') return [];
  const re = linearRegex(val.regex, val.options, global ? '$regexFindAll' : '$regexFind');
  const out: RegexMatch[] = [];
  const max = queryLimits().maxArray;
  for (const m of re.matchAll(val.input)) {
    if (out.length >= max) {
      throw appError('ERR_QUERY_BUDGET', `$regexFindAll found more than ${max} matches (QUERY_MAX_ARRAY); narrow the pattern`);
    }
    const captures: Array<string | null> = [];
    for (let i = 1; i < m.length; i++) captures.push(m[i] ?? null);
    out.push({ match: m[0], idx: m.index ?? 0, captures });
    if (!global) break;
  }
  return out;
}

export const $regexMatch: ExprOp = (obj, expr, options) => {
  const val = evalExpr(obj as object, expr, options as never) as RegexArgs;
  if (typeof val?.input !== 'string') return false;
  return linearRegex(val.regex, val.options, '$regexMatch').test(val.input);
};

export const $regexFind: ExprOp = (obj, expr, options) => matches(obj, expr, options, false)[0] ?? null;

export const $regexFindAll: ExprOp = (obj, expr, options) => matches(obj, expr, options, true);
