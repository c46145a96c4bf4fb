// The OpenAPI 3 document, generated at start-up from the running route table (spec: Versioning 2):
// the same object the reference pages read, so it can never drift from what the server serves.
import type { TSchema } from '@sinclair/typebox';
import { statusName } from '../core/errors.js';
import { exampleFor } from './reference/example-values.js';
import { handExamples, STREAMS, type HandExample } from './reference/examples.js';
import { tagDescription } from './reference/tags.js';
import { openApiWebhooks } from './reference/webhooks.js';
import type { RouteDef } from './route.js';

/** Where the socket channels are described (AsyncAPI 3.0), linked from this document. */
export const ASYNCAPI_PATH = '/asyncapi.json';

export interface OpenApiInfo {
  title: string;
  version: string;
  description?: string;
}

type Json = Record<string, unknown>;

/** `/a/:id` → `/a/{id}` */
export function openApiPath(path: string): string {
  return path.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
}

/** A stable operationId from method and path: `POST /repository/find/:datatype` → `postRepositoryFindByDatatype`. */
export function operationId(def: RouteDef): string {
  if (def.operationId) return def.operationId;
  const words = def.path
    .split('/')
    .filter(Boolean)
    .map((seg) => (seg.startsWith(':') ? `by-${seg.slice(1)}` : seg === '*' ? 'any' : seg))
    .flatMap((seg) => seg.split(/[^A-Za-z0-9]+/))
    .filter(Boolean);
  return [def.method.toLowerCase(), ...words.map((w) => w[0].toUpperCase() + w.slice(1))].join('');
}

/** Plain JSON schema: TypeBox's symbol keys dropped, undefined removed, money typed. */
function plain(schema: TSchema | undefined): Json | undefined {
  return schema ? (typeMoney(JSON.parse(JSON.stringify(schema))) as Json) : undefined;
}

/**
 * A money or quantity field (`x-money`, edge/routes/storefront/common.ts) is left untyped for the
 * validator, so its own message names the field; clients still need a type: a number or a string
 * in plain decimal notation.
 */
function typeMoney(s: unknown): unknown {
  if (Array.isArray(s)) return s.map(typeMoney);
  if (!s || typeof s !== 'object') return s;
  const o = s as Json;
  if (o['x-money']) {
    const { 'x-money': _, ...rest } = o;
    return {
      ...rest,
      oneOf: [
        { type: 'number', minimum: 0 },
        { type: 'string', pattern: '^[0-9]+(\\.[0-9]+)?$' },
      ],
      example: 12.5,
    };
  }
  const out: Json = {};
  for (const k of Object.keys(o)) out[k] = typeMoney(o[k]);
  return out;
}

/** Routes that only redirect elsewhere are not operations of the API. */
export function documented(def: RouteDef): boolean {
  return !(def.status && def.status >= 300 && def.status < 400);
}

function handExamplesObject(list: HandExample[], pick: (e: HandExample) => unknown): Json | undefined {
  const out: Json = {};
  for (const e of list) {
    const value = pick(e);
    if (value !== undefined) out[e.name] = { summary: e.summary, value };
  }
  return Object.keys(out).length ? out : undefined;
}

function parameters(schema: TSchema | undefined, where: 'path' | 'query', given: Record<string, unknown> | undefined): Json[] {
  const s = plain(schema);
  if (!s || typeof s.properties !== 'object') return [];
  const required = new Set((s.required as string[] | undefined) ?? []);
  return Object.entries(s.properties as Record<string, Json>).map(([name, prop]) => {
    const p: Json = { name, in: where, required: where === 'path' || required.has(name), schema: prop };
    if (typeof prop.description === 'string') p.description = prop.description;
    const example = given?.[name] ?? exampleFor(prop, { requiredOnly: true }, name);
    if (example !== undefined) p.example = example;
    return p;
  });
}

function errorStatuses(def: RouteDef): number[] {
  const set = new Set<number>(def.errors ?? []);
  if (def.params || def.query || def.body || (def.tenant ?? 'required') !== 'none') set.add(400);
  if (def.auth !== 'none') {
    set.add(401);
    set.add(403);
  }
  if (def.body) set.add(413);
  set.add(429);
  set.add(500);
  return [...set].sort((a, b) => a - b);
}

export function buildOpenApi(routes: readonly RouteDef[], info: OpenApiInfo): Json {
  const paths: Record<string, Record<string, Json>> = {};
  // A component for every error status an operation references, and no other.
  const used = new Set<number>();
  const tags = new Map<string, number>();
  const ids = new Set<string>();
  const listed = routes.filter(documented);
  for (const def of listed) {
    const hand = handExamples(def.method, def.path);
    tags.set(def.tag, (tags.get(def.tag) ?? 0) + 1);
    const p = openApiPath(def.path);
    const op: Json = {
      operationId: uniqueId(operationId(def), ids),
      tags: [def.tag],
      summary: def.summary,
    };
    if (def.description) op.description = def.description;
    const params: Json[] = [...parameters(def.params, 'path', hand[0]?.params), ...parameters(def.query, 'query', hand[0]?.query)];
    // Path parameters with no schema still need declaring.
    for (const m of def.path.matchAll(/:([A-Za-z0-9_]+)/g)) {
      if (!params.some((x) => x.in === 'path' && x.name === m[1])) {
        params.push({ name: m[1], in: 'path', required: true, schema: { type: 'string' }, example: hand[0]?.params?.[m[1]] ?? 'example' });
      }
    }
    if ((def.tenant ?? 'required') !== 'none') {
      params.push({
        name: 'orgid',
        in: 'header',
        required: (def.tenant ?? 'required') === 'required',
        description: 'Tenant (organisation) id',
        schema: { type: 'string' },
        example: 'lovelace-events-7k2p9q',
      });
    }
    if (params.length) op.parameters = params;
    if (def.body) {
      const content: Json = {};
      const schema = plain(def.body);
      const examples = handExamplesObject(hand, (e) => e.body) ?? generated(exampleFor(schema, { requiredOnly: true }));
      for (const type of def.consumes ?? ['application/json']) {
        content[type] = { schema, ...(type === 'application/json' && examples ? { examples } : {}) };
      }
      op.requestBody = { required: true, content };
    }
    const status = String(def.status ?? 200);
    const stream = def.stream ? STREAMS[`${def.method} ${def.path}`] : undefined;
    const answer = plain(def.response);
    const answerExamples = answer ? (handExamplesObject(hand, (e) => e.response) ?? generated(exampleFor(answer, { requiredOnly: false }))) : undefined;
    const responses: Json = {
      [status]: {
        description: stream ? `${statusName(def.status ?? 200)}: ${stream.description}` : statusName(def.status ?? 200),
        ...(answer ? { content: { 'application/json': { schema: answer, ...(answerExamples ? { examples: answerExamples } : {}) } } } : {}),
        ...(stream ? { content: { 'text/event-stream': { schema: { type: 'string', description: stream.description }, example: stream.example } } } : {}),
      },
    };
    for (const code of errorStatuses(def)) {
      used.add(code);
      responses[String(code)] = { $ref: `#/components/responses/E${code}` };
    }
    op.responses = responses;
    // The door's routes also take an enrolled scanner device's token (edge/route.ts `device`).
    op.security =
      def.auth === 'none' ? [{}] : [{ bearerAuth: [] }, { apiKeyAuth: [] }, ...(def.device ? [{ deviceAuth: [] }] : [])];
    if (def.roles?.length) op['x-roles'] = def.roles;
    op['x-access'] = def.auth;
    (paths[p] ??= {})[def.method.toLowerCase()] = op;
  }
  const errorResponses: Json = {};
  for (const code of [...used].sort((a, b) => a - b)) {
    errorResponses[`E${code}`] = {
      description: statusName(code),
      content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorEnvelope' } } },
      ...(code === 429 || code === 503
        ? { headers: { 'Retry-After': { description: 'Seconds to wait', schema: { type: 'integer' } } } }
        : {}),
    };
  }
  return {
    openapi: '3.1.0',
    info: {
      ...info,
      description: `${info.description ?? ''}\n\n${listed.length} ${listed.length === 1 ? 'endpoint' : 'endpoints'} in ${tags.size} sections. The socket channels are described in AsyncAPI 3.0 at [${ASYNCAPI_PATH}](${ASYNCAPI_PATH}).`.trim(),
      license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
    },
    // Relative: the server that served this document (spec: servers, "relative to the document").
    servers: [{ url: '/', description: 'The server this document was fetched from' }],
    externalDocs: { description: 'Socket channels /chat and /community-chat (AsyncAPI 3.0)', url: ASYNCAPI_PATH },
    'x-asyncapi': ASYNCAPI_PATH,
    tags: [...tags.keys()].sort().map((name) => ({ name, description: tagDescription(name), 'x-endpoints': tags.get(name) })),
    paths,
    // The events the server POSTs to registered endpoints (core/webhooks/catalogue.ts).
    webhooks: openApiWebhooks(),
    components: {
      securitySchemes: {
        bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
        apiKeyAuth: { type: 'apiKey', in: 'header', name: 'x-api-key' },
        deviceAuth: { type: 'apiKey', in: 'header', name: 'x-device-token', description: 'An enrolled scanner device\'s token (or `Authorization: Device <token>`): door routes only' },
      },
      schemas: {
        ErrorEnvelope: {
          type: 'object',
          required: ['statusCode', 'message', 'error'],
          properties: {
            statusCode: { type: 'integer' },
            message: { oneOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }] },
            error: { type: 'string' },
          },
        },
      },
      responses: errorResponses,
    },
  };
}

function generated(value: unknown): Json | undefined {
  return value === undefined ? undefined : { generated: { summary: 'Generated from the schema', value } };
}

function uniqueId(id: string, ids: Set<string>): string {
  let out = id;
  for (let i = 2; ids.has(out); i++) out = `${id}${i}`;
  ids.add(out);
  return out;
}
