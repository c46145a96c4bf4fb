// The MongoDB query language as clients may use it: an allow-list of query, projection and
// expression operators, accumulators, window operators and aggregation stages, run by mingo in a
// context that holds only those, with bounds wherever one operator could ask for unbounded memory
// (see limits.ts) and regexes on RE2 (see regex.ts). Anything not listed is refused with a 400
// naming it, so an operator added to mingo later is off until someone lists it here.
import { Aggregator as AggregatorBase } from 'mingo/aggregator';
import { Context, evalExpr } from 'mingo/core';
import * as accumulatorOps from 'mingo/operators/accumulator';
import * as expressionOps from 'mingo/operators/expression';
import * as pipelineOps from 'mingo/operators/pipeline';
import * as projectionOps from 'mingo/operators/projection';
import * as queryOps from 'mingo/operators/query';
import * as windowOps from 'mingo/operators/window';
import { Query as QueryBase } from 'mingo/query';
import { appError } from '../errors.js';
import { queryLimits } from './limits.js';
import { $regex, $regexFind, $regexFindAll, $regexMatch, assertRegexArgs } from './regex.js';

/** Filter operators. Not `$where` (code), `$jsonSchema`, `$text` or geo. */
export const QUERY_OPERATORS = [
  '$eq', '$ne', '$gt', '$gte', '$lt', '$lte', '$in', '$nin',
  '$and', '$or', '$nor', '$not', '$exists', '$type', '$regex', '$mod',
  '$all', '$elemMatch', '$size', '$expr',
  '$bitsAllClear', '$bitsAllSet', '$bitsAnyClear', '$bitsAnySet',
] as const;

export const PROJECTION_OPERATORS = ['$slice', '$elemMatch'] as const;

/** Stages that only filter, reshape, group or order the documents they are given. */
export const PIPELINE_STAGES = [
  '$match', '$project', '$addFields', '$set', '$unset', '$group', '$sort', '$limit', '$skip', '$count',
  '$unwind', '$sortByCount', '$bucket', '$bucketAuto', '$facet', '$replaceRoot', '$replaceWith',
  '$sample', '$redact', '$setWindowFields',
] as const;

/** Every expression operator mingo has but `$function` (code). */
export const EXPRESSION_OPERATORS = [
  '$abs', '$acos', '$acosh', '$add', '$allElementsTrue', '$and', '$anyElementTrue', '$arrayElemAt',
  '$arrayToObject', '$asin', '$asinh', '$atan', '$atan2', '$atanh', '$bitAnd', '$bitNot', '$bitOr',
  '$bitXor', '$ceil', '$cmp', '$concat', '$concatArrays', '$cond', '$convert', '$cos', '$cosh',
  '$dateAdd', '$dateDiff', '$dateFromParts', '$dateFromString', '$dateSubtract', '$dateToParts',
  '$dateToString', '$dateTrunc', '$dayOfMonth', '$dayOfWeek', '$dayOfYear', '$degreesToRadians',
  '$divide', '$eq', '$exp', '$filter', '$first', '$firstN', '$floor', '$getField', '$gt', '$gte',
  '$hour', '$ifNull', '$in', '$indexOfArray', '$indexOfBytes', '$isArray', '$isNumber',
  '$isoDayOfWeek', '$isoWeek', '$isoWeekYear', '$last', '$lastN', '$let', '$literal', '$ln', '$log',
  '$log10', '$lt', '$lte', '$ltrim', '$map', '$maxN', '$median', '$mergeObjects', '$millisecond',
  '$minN', '$minute', '$mod', '$month', '$multiply', '$ne', '$not', '$objectToArray', '$or',
  '$percentile', '$pow', '$radiansToDegrees', '$rand', '$range', '$reduce', '$regexFind',
  '$regexFindAll', '$regexMatch', '$replaceAll', '$replaceOne', '$reverseArray', '$round', '$rtrim',
  '$sampleRate', '$second', '$setDifference', '$setEquals', '$setField', '$setIntersection',
  '$setIsSubset', '$setUnion', '$sigmoid', '$sin', '$sinh', '$size', '$slice', '$sortArray', '$split',
  '$sqrt', '$strLenBytes', '$strLenCP', '$strcasecmp', '$substr', '$substrBytes', '$substrCP',
  '$subtract', '$switch', '$tan', '$tanh', '$toBool', '$toDate', '$toDecimal', '$toDouble',
  '$toHashedIndexKey', '$toInt', '$toLong', '$toLower', '$toString', '$toUpper', '$trim', '$trunc',
  '$type', '$unsetField', '$week', '$year', '$zip',
] as const;

/** Every accumulator mingo has but `$accumulator` (code). */
export const ACCUMULATORS = [
  '$addToSet', '$avg', '$bottom', '$bottomN', '$count', '$covariancePop', '$covarianceSamp', '$first',
  '$firstN', '$last', '$lastN', '$max', '$maxN', '$median', '$mergeObjects', '$min', '$minN',
  '$percentile', '$push', '$stdDevPop', '$stdDevSamp', '$sum', '$top', '$topN',
] as const;

export const WINDOW_OPERATORS = [
  '$denseRank', '$derivative', '$documentNumber', '$expMovingAvg', '$integral', '$linearFill', '$locf',
  '$minMaxScaler', '$rank', '$shift',
] as const;

/** Keys that are arguments of an operator, not operators: `{$regex, $options}`. */
const MODIFIERS = ['$options'] as const;

const ALLOWED: ReadonlySet<string> = new Set<string>([
  ...QUERY_OPERATORS,
  ...PROJECTION_OPERATORS,
  ...PIPELINE_STAGES,
  ...EXPRESSION_OPERATORS,
  ...ACCUMULATORS,
  ...WINDOW_OPERATORS,
  ...MODIFIERS,
]);

/** How deeply a filter, projection or pipeline may nest (MongoDB allows 100 levels of documents). */
const MAX_DEPTH = 64;

/**
 * Throws 400 for the first key of `v` that names an operator outside the allow-list, for a regex
 * over its length limit or with unknown options, and for a nesting deeper than MAX_DEPTH. Cheap
 * (one walk of what the client sent), so it runs before a query is handed to a worker.
 */
export function assertClientQuery(v: unknown, where: string): void {
  const stack: Array<[unknown, number]> = [[v, 0]];
  while (stack.length > 0) {
    const [x, depth] = stack.pop()!;
    if (x === null || typeof x !== 'object') continue;
    if (depth > MAX_DEPTH) throw appError('ERR_VALIDATION', `${where} is nested more than ${MAX_DEPTH} levels deep`);
    if (Array.isArray(x)) {
      for (const item of x) stack.push([item, depth + 1]);
      continue;
    }
    const obj = x as Record<string, unknown>;
    for (const k of Object.keys(obj)) {
      if (k.startsWith('$')) {
        if (!ALLOWED.has(k)) throw appError('ERR_VALIDATION', `${where} may not use ${k}: it is not an operator clients may use`);
        if (k === '$regex') assertRegexArgs(obj.$regex, obj.$options, `${where} $regex`);
        else if (k === '$range') assertRangeLiteral(obj.$range, where);
        else if ((k === '$regexMatch' || k === '$regexFind' || k === '$regexFindAll') && obj[k] && typeof obj[k] === 'object') {
          const a = obj[k] as { regex?: unknown; options?: unknown };
          // A computed pattern (`"$field"`) is checked when it runs.
          if (typeof a.regex === 'string' && !a.regex.startsWith('$')) assertRegexArgs(a.regex, a.options, `${where} ${k}`);
        }
      }
      stack.push([obj[k], depth + 1]);
    }
  }
}

function rangeBudget(n: number, where?: string): never {
  const max = queryLimits().maxRange;
  throw appError(
    'ERR_QUERY_BUDGET',
    `$range of ${n} elements${where ? ` in ${where}` : ''} is over the limit of ${max} per call (QUERY_MAX_RANGE); use a smaller range`,
  );
}

function rangeLength(start: number, end: number, step: number): number {
  return Math.max(0, Math.ceil((end - start) / step));
}

/** Literal bounds are refused before the query runs; computed ones when $range runs. */
function assertRangeLiteral(arg: unknown, where: string): void {
  if (!Array.isArray(arg) || arg.length < 2 || arg.length > 3) return;
  const [start, end, step = 1] = arg as unknown[];
  if (typeof start !== 'number' || typeof end !== 'number' || typeof step !== 'number' || step === 0) return;
  const n = rangeLength(start, end, step);
  if (n > queryLimits().maxRange) rangeBudget(n, where);
}

type ExprOp = (obj: unknown, expr: unknown, options: unknown) => unknown;
type StageOp = (coll: { map(f: (x: unknown) => unknown): unknown }, expr: unknown, options: unknown) => { map(f: (x: unknown) => unknown): unknown };

function overBudget(what: string, n: number, max: number, limit: string, unit: string): never {
  throw appError('ERR_QUERY_BUDGET', `${what} would hold ${n} ${unit}; the limit is ${max} (${limit}); narrow the query`);
}

/** Every operator's result is held to the array and string limits. */
function checked(name: string, op: ExprOp): ExprOp {
  return (obj, expr, options) => {
    const out = op(obj, expr, options);
    const l = queryLimits();
    if (Array.isArray(out)) {
      if (out.length > l.maxArray) overBudget(`the array from ${name}`, out.length, l.maxArray, 'QUERY_MAX_ARRAY', 'elements');
    } else if (typeof out === 'string' && out.length > l.maxString) {
      overBudget(`the string from ${name}`, out.length, l.maxString, 'QUERY_MAX_STRING', 'characters');
    }
    return out;
  };
}

/**
 * Operators whose result can be far larger than their arguments: the size is computed from the
 * evaluated arguments before anything is built, then mingo's operator runs on them as literals.
 */
function sizedBefore(name: string, op: ExprOp, size: (args: unknown) => [number, 'array' | 'string']): ExprOp {
  return (obj, expr, options) => {
    const args = evalExpr(obj as object, expr, options as never);
    const [n, kind] = size(args);
    const l = queryLimits();
    if (kind === 'array' && n > l.maxArray) overBudget(`the array from ${name}`, n, l.maxArray, 'QUERY_MAX_ARRAY', 'elements');
    if (kind === 'string' && n > l.maxString) overBudget(`the string from ${name}`, n, l.maxString, 'QUERY_MAX_STRING', 'characters');
    return op(obj, asLiterals(expr, args), options);
  };
}

/** `args` (evaluated from `expr`) in the shape of `expr`, each part a literal, so it is not evaluated again. */
function asLiterals(expr: unknown, args: unknown): unknown {
  if (Array.isArray(expr) && Array.isArray(args)) return args.map((a) => ({ $literal: a }));
  const isPlain = (v: unknown) => v !== null && typeof v === 'object' && !Array.isArray(v);
  if (isPlain(expr) && isPlain(args) && !Object.keys(expr as object).some((k) => k.startsWith('$'))) {
    return Object.fromEntries(Object.entries(args as object).map(([k, v]) => [k, { $literal: v }]));
  }
  return { $literal: args };
}

const lengths = (args: unknown): number => {
  let n = 0;
  if (Array.isArray(args)) for (const a of args) if (Array.isArray(a) || typeof a === 'string') n += a.length;
  return n;
};

function occurrences(s: string, find: string, stopAfter: number): number {
  if (find === '') return s.length + 1;
  let n = 0;
  for (let i = s.indexOf(find); i !== -1 && n <= stopAfter; i = s.indexOf(find, i + find.length)) n++;
  return n;
}

const $range: ExprOp = (obj, expr, options) => {
  if (!Array.isArray(expr) || expr.length < 2 || expr.length > 3) throw appError('ERR_VALIDATION', '$range expects [start, end] or [start, end, step]');
  const [start, end, step = 1] = evalExpr(obj as object, expr, options as never) as unknown[];
  if (!Number.isInteger(start) || !Number.isInteger(end) || !Number.isInteger(step) || step === 0) {
    throw appError('ERR_VALIDATION', '$range needs integer start and end and a non-zero integer step');
  }
  const n = rangeLength(start as number, end as number, step as number);
  if (n > queryLimits().maxRange) rangeBudget(n);
  const out = new Array<number>(n);
  for (let i = 0; i < n; i++) out[i] = (start as number) + i * (step as number);
  return out;
};

/** Each stage passes on at most maxStageDocuments documents (`$unwind` and `$sample` multiply). */
function counted(name: string, op: StageOp): StageOp {
  return (coll, expr, options) => {
    let n = 0;
    return op(coll, expr, options).map((x) => {
      const max = queryLimits().maxStageDocuments;
      if (++n > max) overBudget(`stage ${name}`, n, max, 'QUERY_MAX_STAGE_DOCUMENTS', 'documents');
      return x;
    }) as ReturnType<StageOp>;
  };
}

function pick<T>(ops: Record<string, unknown>, names: readonly string[], kind: string): Record<string, T> {
  const out: Record<string, T> = {};
  for (const name of names) {
    const op = ops[name];
    if (typeof op !== 'function') throw new Error(`mingo has no ${kind} operator ${name}`);
    out[name] = op as T;
  }
  return out;
}

function buildContext(): Context {
  const expression = pick<ExprOp>(expressionOps, EXPRESSION_OPERATORS, 'expression');
  expression.$range = $range;
  expression.$regexMatch = $regexMatch;
  expression.$regexFind = $regexFind;
  expression.$regexFindAll = $regexFindAll;
  expression.$concatArrays = sizedBefore('$concatArrays', expression.$concatArrays, (a) => [lengths(a), 'array']);
  expression.$setUnion = sizedBefore('$setUnion', expression.$setUnion, (a) => [lengths(a), 'array']);
  expression.$concat = sizedBefore('$concat', expression.$concat, (a) => [lengths(a), 'string']);
  expression.$replaceAll = sizedBefore('$replaceAll', expression.$replaceAll, (a) => {
    const { input, find, replacement } = (a ?? {}) as { input?: unknown; find?: unknown; replacement?: unknown };
    if (typeof input !== 'string' || typeof find !== 'string' || typeof replacement !== 'string') return [0, 'string'];
    const grow = replacement.length - find.length;
    const n = grow > 0 ? occurrences(input, find, Math.ceil(queryLimits().maxString / grow)) : 0;
    return [input.length + n * Math.max(0, grow), 'string'];
  });
  for (const name of Object.keys(expression)) expression[name] = checked(name, expression[name]);
  const accumulator = pick<ExprOp>(accumulatorOps, ACCUMULATORS, 'accumulator');
  for (const name of Object.keys(accumulator)) accumulator[name] = checked(name, accumulator[name]);
  const pipeline = pick<StageOp>(pipelineOps, PIPELINE_STAGES, 'pipeline');
  for (const name of Object.keys(pipeline)) pipeline[name] = counted(name, pipeline[name]);
  const query = pick<unknown>(queryOps, QUERY_OPERATORS, 'query');
  query.$regex = $regex;
  return Context.init({
    query: query as never,
    projection: pick(projectionOps, PROJECTION_OPERATORS, 'projection') as never,
    expression: expression as never,
    accumulator: accumulator as never,
    pipeline: pipeline as never,
    window: pick(windowOps, WINDOW_OPERATORS, 'window') as never,
  });
}

let context: Context | undefined;

/** Options for mingo: the client context, no scripts. */
export function clientOptions(): { context: Context; scriptEnabled: false } {
  return { context: (context ??= buildContext()), scriptEnabled: false };
}

/** A compiled client filter (throws mingo's complaint; callers turn it into a 400). */
export function clientFilter(filter: Record<string, unknown>): QueryBase {
  return new QueryBase(filter, clientOptions());
}

/** A client pipeline, run over `docs`. */
export function runPipeline(pipeline: Record<string, unknown>[], docs: unknown[]): Record<string, unknown>[] {
  return new AggregatorBase(pipeline, clientOptions()).run(docs as never) as Record<string, unknown>[];
}
