// The OpenAPI 3 document, generated at start-up from the running route table (spec: Versioning 2):
// the same object the reference pages read, so it can never drift from what the server serves.
import type { TSchema } from '@sinclair/typebox';
import { ErrorCodes, statusName } from '../core/errors.js';
import type { RouteDef } from './route.js';

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

/** Plain JSON schema: TypeBox's symbol keys dropped, undefined removed. */
function plain(schema: TSchema | undefined): Json | undefined {
  return schema ? (JSON.parse(JSON.stringify(schema)) as Json) : undefined;
}

function parameters(schema: TSchema | undefined, where: 'path' | 'query'): Json[] {
  const s = plain(schema);
  if (!s || typeof s.properties !== 'object') return [];
  const required = new Set((s.required as string[] | undefined) ?? []);
  return Object.entries(s.properties as Record<string, Json>).map(([name, prop]) => {
    const p: Json = { name, in: where, required: where === 'path' || required.has(name), schema: prop };
    if (typeof prop.description === 'string') p.description = prop.description;
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
  // Every status an operation may reference gets a component: the error table's and any a route names.
  const used = new Set<number>(Object.values(ErrorCodes).map((c) => c.statusCode));
  const tags = new Map<string, number>();
  const ids = new Set<string>();
  for (const def of routes) {
    tags.set(def.tag, (tags.get(def.tag) ?? 0) + 1);
    const p = openApiPath(def.path);
    const op: Json = {
      operationId: uniqueId(operationId(def), ids),
      tags: [def.tag],
      summary: def.summary,
    };
    if (def.description) op.description = def.description;
    const params: Json[] = [...parameters(def.params, 'path'), ...parameters(def.query, 'query')];
    // Path parameters with no schema still need declaring.
    for (const m of def.path.matchAll(/:([A-Za-z0-9_]+)/g)) {
      if (!params.some((x) => x.in === 'path' && x.name === m[1])) {
        params.push({ name: m[1], in: 'path', required: true, schema: { type: 'string' } });
      }
    }
    if ((def.tenant ?? 'required') !== 'none') {
      params.push({
        name: 'orgid',
        in: 'header',
        required: (def.tenant ?? 'required') === 'required',
        description: 'Tenant (organisation) id',
        schema: { type: 'string' },
      });
    }
    if (params.length) op.parameters = params;
    if (def.body) {
      const content: Json = {};
      for (const type of def.consumes ?? ['application/json']) content[type] = { schema: plain(def.body) };
      op.requestBody = { required: true, content };
    }
    const status = String(def.status ?? 200);
    const responses: Json = {
      [status]: {
        description: statusName(def.status ?? 200),
        ...(def.response ? { content: { 'application/json': { schema: plain(def.response) } } } : {}),
      },
    };
    for (const code of errorStatuses(def)) {
      used.add(code);
      responses[String(code)] = { $ref: `#/components/responses/E${code}` };
    }
    op.responses = responses;
    op.security =
      def.auth === 'none' ? [{}] : [{ bearerAuth: [] }, { apiKeyAuth: [] }];
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
      description: `${info.description ?? ''}\n\n${routes.length} endpoints in ${tags.size} sections.`.trim(),
    },
    tags: [...tags.keys()].sort().map((name) => ({ name, 'x-endpoints': tags.get(name) })),
    paths,
    components: {
      securitySchemes: {
        bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
        apiKeyAuth: { type: 'apiKey', in: 'header', name: 'x-api-key' },
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

function uniqueId(id: string, ids: Set<string>): string {
  let out = id;
  for (let i = 2; ids.has(out); i++) out = `${id}${i}`;
  ids.add(out);
  return out;
}
