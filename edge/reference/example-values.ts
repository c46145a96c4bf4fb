// Examples generated from a JSON schema, for every operation without a hand-written one. Values
// look like real data (a name looks like a name, an id like an id) and keep to the schema: a
// string with a pattern gets a candidate the pattern accepts, or is left out when optional.
// Request examples carry the required fields only (an optional field filled with a guess is how a
// runner turns a valid request into a 400); answer examples show every field.

type Schema = Record<string, unknown>;

const HEX_ID = '665f1c2ab4d3e8f9a0b1c2d3';
const DATE_TIME = '2026-10-03T19:00:00.000Z';

/** Values by field name, tried before anything generic. */
const BY_NAME: ReadonlyArray<readonly [RegExp, unknown]> = [
  [/^e-?mail$|email$/i, 'ada@example.com'],
  [/password|passcode|secret/i, 'correct-horse-battery'],
  [/^(first)?name$|holdername|fullname|displayname/i, 'Ada Lovelace'],
  [/lastname|surname/i, 'Lovelace'],
  [/phone|mobile/i, '+442079460958'],
  [/^orgid$|^org$|^tenant/i, 'lovelace-events-7k2p9q'],
  [/orgname|company|organi[sz]ation/i, 'Lovelace Events'],
  [/^title$|subject/i, 'Autumn Jazz Night'],
  [/^text$|message|body|note|comment|content/i, 'Doors open at 18:30.'],
  [/description|summary/i, 'An evening of live jazz in the old mill.'],
  [/currency/i, 'GBP'],
  [/timezone|^tz$/i, 'Europe/London'],
  [/zone$/i, 'main-hall'],
  [/venue|address|street/i, 'The Old Mill, 1 River Lane'],
  [/city/i, 'London'],
  [/country/i, 'GB'],
  [/url|uri|href|link|website/i, 'https://example.com/events/autumn-jazz-night'],
  [/slug/i, 'autumn-jazz-night'],
  [/datatype/i, 'bm_note'],
  [/status|state/i, 'active'],
  [/department/i, 'Sales'],
  [/role/i, 'User'],
  [/code$/i, 'JZ7Q4K2M9P'],
  [/token/i, 'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiI2NjVmMWMyYSJ9.c2lnbmF0dXJl'],
  [/idempotency/i, '3f1c2a9e-5b7d-4c1e-9a0b-2d3e4f5a6b7c'],
  [/color|colour/i, '#2457c5'],
  [/locale|lang/i, 'en-GB'],
  [/label/i, 'Window table'],
  [/businesslocationid|location$/i, 'main'],
  [/checkpoint|device/i, 'north-door'],
  [/group/i, 'volunteers'],
  [/sort$/i, 'createdate'],
  [/^(id|sk|_id)$|id$/i, HEX_ID],
];

const NUM_BY_NAME: ReadonlyArray<readonly [RegExp, number]> = [
  [/price|amount|total|subtotal|tip|tax|balance|cost|fee|paid|refund/i, 12.5],
  [/quantity|qty|count|seats|guests|party/i, 2],
  [/capacity/i, 300],
  [/^page$/i, 1],
  [/pagesize|limit|perpage/i, 20],
  [/seq/i, 1],
  [/seconds/i, 30],
  [/minutes/i, 15],
  [/^(lat|latitude)$/i, 51.5072],
  [/^(lng|lon|longitude)$/i, -0.1276],
];

/** Generic strings tried against a pattern, in order. */
const CANDIDATES = [
  HEX_ID,
  'main-hall',
  'autumn-jazz-night',
  'bm_note',
  'JZ7Q4K2M9P',
  'GBP',
  'User',
  'volunteers',
  'd:ada:grace',
  'g:volunteers',
  '+442079460958',
  'example',
  'A1',
  '12.50',
  '2026-10-03',
  '9b1deb4d3b7d4bad9bdd2b0d7b3dcb6d',
  'reference.md',
  '4821',
  '1',
  'a',
];

function fits(value: string, s: Schema): boolean {
  if (typeof s.minLength === 'number' && value.length < s.minLength) return false;
  if (typeof s.maxLength === 'number' && value.length > s.maxLength) return false;
  if (typeof s.pattern === 'string') {
    try {
      if (!new RegExp(s.pattern, 'u').test(value)) return false;
    } catch {
      return false;
    }
  }
  return true;
}

const NONE = Symbol('none');

function stringFor(s: Schema, name: string): string | typeof NONE {
  switch (s.format) {
    case 'email':
      return 'ada@example.com';
    case 'date-time':
      return DATE_TIME;
    case 'date':
      return '2026-10-03';
    case 'time':
      return '19:00:00';
    case 'uri':
    case 'url':
      return 'https://example.com/hooks/orders';
    case 'uuid':
      return '3f1c2a9e-5b7d-4c1e-9a0b-2d3e4f5a6b7c';
  }
  const named = BY_NAME.find(([re, v]) => typeof v === 'string' && re.test(name))?.[1] as string | undefined;
  if (named !== undefined && fits(named, s)) return named;
  if (!s.pattern && /date|at$|time/i.test(name) && fits(DATE_TIME, s)) return DATE_TIME;
  for (const c of CANDIDATES) if (fits(c, s)) return c;
  if (!s.pattern) {
    const min = typeof s.minLength === 'number' ? s.minLength : 1;
    const max = typeof s.maxLength === 'number' ? s.maxLength : 64;
    const base = named ?? 'example';
    const v = base.length >= min ? base.slice(0, max) : base.padEnd(min, 'x');
    if (fits(v, s)) return v;
  }
  return NONE;
}

function numberFor(s: Schema, name: string, integer: boolean): number {
  let v = NUM_BY_NAME.find(([re]) => re.test(name))?.[1] ?? (integer ? 1 : 12.5);
  if (integer) v = Math.round(v);
  const min = typeof s.minimum === 'number' ? s.minimum : typeof s.exclusiveMinimum === 'number' ? s.exclusiveMinimum + (integer ? 1 : 0.5) : undefined;
  const max = typeof s.maximum === 'number' ? s.maximum : typeof s.exclusiveMaximum === 'number' ? s.exclusiveMaximum - (integer ? 1 : 0.5) : undefined;
  if (min !== undefined && v < min) v = min;
  if (max !== undefined && v > max) v = max;
  if (typeof s.multipleOf === 'number' && s.multipleOf > 0) v = Math.ceil(v / s.multipleOf) * s.multipleOf;
  return v;
}

export interface ExampleOptions {
  /** Request examples: required fields only. Answers: every field. */
  requiredOnly: boolean;
}

/** An example value for a schema, or undefined when none can be made that the schema accepts. */
export function exampleFor(schema: unknown, opts: ExampleOptions, name = '', depth = 0): unknown {
  const v = gen(schema, opts, name, depth);
  return v === NONE ? undefined : v;
}

function gen(schema: unknown, opts: ExampleOptions, name: string, depth: number): unknown {
  if (!schema || typeof schema !== 'object' || depth > 8) return NONE;
  const s = schema as Schema;
  if (s.example !== undefined) return s.example;
  if (Array.isArray(s.examples) && s.examples.length) return s.examples[0];
  if (s.const !== undefined) return s.const;
  if (s.default !== undefined) return s.default;
  if (Array.isArray(s.enum) && s.enum.length) return s.enum[0];
  const alts = (s.anyOf ?? s.oneOf) as Schema[] | undefined;
  if (Array.isArray(alts)) {
    // The first alternative that is not null and can be made.
    for (const alt of alts) {
      if (alt.type === 'null') continue;
      const v = gen({ ...alt, description: undefined }, opts, name, depth);
      if (v !== NONE) return v;
    }
    return alts.some((a) => a.type === 'null') ? null : NONE;
  }
  if (s.if && s.then) return gen(s.then, opts, name, depth);
  if (Array.isArray(s.allOf)) {
    return gen(Object.assign({}, ...(s.allOf as Schema[])), opts, name, depth);
  }
  const type = Array.isArray(s.type) ? (s.type as string[]).find((t) => t !== 'null') : (s.type as string | undefined);
  if (type === 'object' || s.properties) return objectFor(s, opts, depth);
  if (type === 'array') {
    const item = gen(s.items, opts, singular(name), depth + 1);
    if (item === NONE) return typeof s.minItems === 'number' && s.minItems > 0 ? NONE : [];
    const n = Math.max(1, typeof s.minItems === 'number' ? s.minItems : 1);
    return Array.from({ length: n }, () => item);
  }
  if (type === 'integer') return numberFor(s, name, true);
  if (type === 'number') return numberFor(s, name, false);
  if (type === 'boolean') return /^(is|has|allow|enabled|active)/i.test(name);
  if (type === 'string') return stringFor(s, name);
  if (type === 'null') return null;
  return NONE;
}

function objectFor(s: Schema, opts: ExampleOptions, depth: number): unknown {
  const props = (s.properties ?? {}) as Record<string, Schema>;
  const required = new Set((s.required as string[] | undefined) ?? []);
  const out: Record<string, unknown> = {};
  // A request object with nothing required still shows a few of its fields.
  let optional = opts.requiredOnly && required.size === 0 && depth === 0 ? 3 : 0;
  for (const [k, p] of Object.entries(props)) {
    if (opts.requiredOnly && !required.has(k) && optional-- <= 0) continue;
    const v = gen(p, opts, k, depth + 1);
    if (v === NONE) {
      if (required.has(k)) return NONE;
      continue;
    }
    out[k] = v;
  }
  // At least `minProperties`: fill in optional fields until there are enough.
  const min = typeof s.minProperties === 'number' ? s.minProperties : 0;
  for (const [k, p] of Object.entries(props)) {
    if (Object.keys(out).length >= min) break;
    if (k in out) continue;
    const v = gen(p, { requiredOnly: false }, k, depth + 1);
    if (v !== NONE) out[k] = v;
  }
  return Object.keys(out).length >= min ? out : NONE;
}

function singular(name: string): string {
  return name.endsWith('ies') ? `${name.slice(0, -3)}y` : name.endsWith('s') ? name.slice(0, -1) : name;
}
