// Compiles a route's schemas once: ajv validators for params, query and body, and a
// fast-json-stringify serializer for the success answer. At request time only these run.
import type { TSchema } from '@sinclair/typebox';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import fastJson from 'fast-json-stringify';
import { AppError } from '../core/errors.js';
import type { RouteDef } from './route.js';

// ajv-formats is CommonJS with a default export; under NodeNext its type is the module object.
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

function makeAjv(coerce: boolean): Ajv {
  const ajv = new Ajv({
    allErrors: true,
    strict: false,
    coerceTypes: coerce ? 'array' : false,
    useDefaults: true,
    removeAdditional: false,
  });
  addFormats(ajv);
  return ajv;
}

// Query strings and path parameters are text: coerce them to the declared types. Bodies are
// JSON, so a string where a number is declared is a client error, not something to guess at.
const textAjv = makeAjv(true);
const jsonAjv = makeAjv(false);

export type Validator = (value: unknown) => unknown;
export type Serializer = (value: unknown) => string;

function describe(where: string, e: ErrorObject): string {
  const at = where + e.instancePath;
  switch (e.keyword) {
    case 'required':
      return `${at}/${(e.params as { missingProperty: string }).missingProperty} is required`;
    case 'additionalProperties':
      return `${at}/${(e.params as { additionalProperty: string }).additionalProperty} is not allowed`;
    case 'enum':
      return `${at} must be one of: ${(e.params as { allowedValues: unknown[] }).allowedValues.map(String).join(', ')}`;
    default:
      return `${at} ${e.message ?? 'is invalid'}`;
  }
}

function validator(ajv: Ajv, schema: TSchema | undefined, where: string): Validator | undefined {
  if (!schema) return undefined;
  const fn: ValidateFunction = ajv.compile(schema);
  return (value) => {
    if (fn(value)) return value;
    const messages = [...new Set((fn.errors ?? []).slice(0, 20).map((e) => describe(where, e)))];
    throw new AppError('ERR_VALIDATION', [messages.join('; ')], { messages });
  };
}

/** The serializer a route with `schema` as its answer writes with (the same bytes). */
export function serializerOf(schema: TSchema): Serializer {
  return fastJson(schema as object) as Serializer;
}

export interface CompiledRoute {
  params?: Validator;
  query?: Validator;
  body?: Validator;
  serialize: Serializer;
}

// Each part compiles on first use, then stays: a node with every module has a few hundred routes and
// compiling all their schemas took seconds of every start (and of every test that starts a node), while
// most of them never see a request in a given process. A request pays one field read per part after that.
class LazyRoute implements CompiledRoute {
  #params?: Validator | null;
  #query?: Validator | null;
  #body?: Validator | null;
  #serialize?: Serializer;
  constructor(private readonly def: RouteDef) {}
  get params(): Validator | undefined {
    if (this.#params === undefined) this.#params = validator(textAjv, this.def.params, 'params') ?? null;
    return this.#params ?? undefined;
  }
  get query(): Validator | undefined {
    if (this.#query === undefined) this.#query = validator(textAjv, this.def.query, 'query') ?? null;
    return this.#query ?? undefined;
  }
  get body(): Validator | undefined {
    if (this.#body === undefined) this.#body = validator(jsonAjv, this.def.body, 'body') ?? null;
    return this.#body ?? undefined;
  }
  get serialize(): Serializer {
    return (this.#serialize ??= this.def.response ? serializerOf(this.def.response) : JSON.stringify);
  }
}

/**
 * A route's compiled parts. With `now` everything is compiled before this returns, as plain
 * fields: a node that compiles at start pays no getter on any request.
 */
export function compileRoute(def: RouteDef, now = false): CompiledRoute {
  const route = new LazyRoute(def);
  if (!now) return route;
  return { params: route.params, query: route.query, body: route.body, serialize: route.serialize };
}
