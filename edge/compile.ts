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

export interface CompiledRoute {
  params?: Validator;
  query?: Validator;
  body?: Validator;
  serialize: Serializer;
}

export function compileRoute(def: RouteDef): CompiledRoute {
  return {
    params: validator(textAjv, def.params, 'params'),
    query: validator(textAjv, def.query, 'query'),
    body: validator(jsonAjv, def.body, 'body'),
    serialize: def.response ? (fastJson(def.response as object) as Serializer) : JSON.stringify,
  };
}
