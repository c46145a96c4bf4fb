// An ack as its schema has it: undeclared fields never leave, types as declared. fast-json-stringify
// does the shaping, as for a route's response; but socket.io's ack takes a value, not JSON, so the
// shaped text would be parsed back and encoded again by socket.io, once per message of every chat
// (a JSON.parse of a few hundred bytes on the hottest socket path).
//
// Most results are already what the schema says. A compiled check of the schema, closed where it
// was open by default (fast-json-stringify drops fields an object does not declare unless it allows
// them), tells those apart in a fraction of the cost: such a value goes out as it is, and only the
// rest is shaped through fast-json-stringify. Both paths put the same fields and values on the wire
// (the order of fields may differ). A schema with alternatives (anyOf, oneOf, allOf) is always
// shaped: fast-json-stringify picks the first alternative its own validation accepts, which a check
// of closed alternatives cannot foresee.
import type { TSchema } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import fastJson from 'fast-json-stringify';

export type AckShape = (result: unknown) => unknown;

const ALTERNATIVES = ['anyOf', 'oneOf', 'allOf', 'not', 'if'];

/** The schema as the serializer reads it: objects closed unless they say otherwise, no formats to check. */
function closed(schema: unknown): { schema: unknown; alternatives: boolean } {
  let alternatives = false;
  const each = (m: unknown) => (m && typeof m === 'object' ? Object.fromEntries(Object.entries(m).map(([k, v]) => [k, walk(v)])) : m);
  const walk = (s: unknown): unknown => {
    if (Array.isArray(s)) return s.map(walk);
    if (s === null || typeof s !== 'object') return s;
    const src = s as Record<string | symbol, unknown>;
    const out: Record<string | symbol, unknown> = {};
    for (const [k, v] of Object.entries(src)) {
      if (ALTERNATIVES.includes(k)) alternatives = true;
      // A string's format is not the serializer's business (it writes strings as they are).
      if (k === 'format' && typeof v === 'string') continue;
      out[k] = k === 'properties' || k === 'patternProperties' ? each(v) : k === 'items' || k === 'additionalProperties' ? walk(v) : v;
    }
    // TypeBox's kind markers are symbols: its compiler reads them.
    for (const sym of Object.getOwnPropertySymbols(src)) out[sym] = src[sym];
    if (src.type === 'object' && src.additionalProperties === undefined && src.patternProperties === undefined) out.additionalProperties = false;
    return out;
  };
  return { schema: walk(schema), alternatives };
}

export function compileAckShape(schema: TSchema): AckShape {
  const serialize = fastJson(schema as object) as (v: unknown) => string;
  const shape: AckShape = (r) => JSON.parse(serialize(r)) as unknown;
  const c = closed(schema);
  if (c.alternatives) return shape;
  let exact: ReturnType<typeof TypeCompiler.Compile>;
  try {
    exact = TypeCompiler.Compile(c.schema as TSchema);
  } catch {
    // A schema the checker cannot compile (a reference it is not given) is always shaped.
    return shape;
  }
  return (r) => (exact.Check(r) ? r : shape(r));
}
