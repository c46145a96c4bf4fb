// The reference as text: /llms.txt, /documentation.md, one section, one endpoint.
import type { Catalogue, Endpoint, Section } from './catalogue.js';

const ACCESS: Record<string, string> = {
  none: 'public: no token',
  customer: 'a customer or staff token',
  staff: 'a staff token',
};

/** Who may call, in plain words: "a staff token with the Admin role". */
export function access(e: Pick<Endpoint, 'auth' | 'roles'>): string {
  const base = ACCESS[e.auth] ?? e.auth;
  if (!e.roles.length) return base;
  const roles = e.roles.length === 1 ? e.roles[0] : `${e.roles.slice(0, -1).join(', ')} or ${e.roles[e.roles.length - 1]}`;
  return `${base} with the ${roles} role`;
}

export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

function endpointLink(e: Endpoint): string {
  return `/documentation/endpoint?method=${e.method}&path=${encodeURIComponent(e.path)}`;
}

/** The operation's own address in the browsable reference. */
export function endpointAnchor(e: Pick<Endpoint, 'method' | 'path'>): string {
  return `/documentation#/op/${e.method}${e.path}`;
}

export function counts(c: Catalogue): string {
  return `${plural(c.endpoints.length, 'endpoint')} in ${plural(c.sections.length, 'section')}`;
}

export function llmsTxt(c: Catalogue, title: string): string {
  const lines = [
    `# ${title}`,
    '',
    `> A multi-tenant business platform API. Every call carries the tenant in the \`orgid\` header; most need \`Authorization: Bearer <jwt>\` or \`x-api-key\`. Errors answer \`{statusCode, message, error}\`. ${counts(c)}.`,
    '',
    '## Reference',
    '',
    '- [OpenAPI 3 document](/openapi.json): the complete machine-readable contract, with an example for every operation',
    '- [AsyncAPI 3 document](/asyncapi.json): the socket channels `/chat` and `/community-chat`, every event in both directions with its payload and ack',
    '- [Socket channels in Markdown](/documentation/channels.md)',
    '- [Getting started and every endpoint, one line each](/documentation.md)',
    '- [Search](/documentation/search?q=checkin): `GET /documentation/search?q=<phrase>`',
    '- [Browsable reference with a request runner](/documentation)',
    '',
    '## Sections',
    '',
    ...c.sections.map((s) => `- [${s.name}](/documentation/tag/${s.slug}.md): ${plural(s.endpoints.length, 'endpoint')}`),
    '',
  ];
  return lines.join('\n');
}

function oneLine(e: Endpoint): string {
  return `- \`${e.method} ${e.path}\` — ${e.summary} (${access(e)})`;
}

/**
 * Errors any endpoint may answer (spec: Errors, case 9): catalogued once, in /documentation.md,
 * not in every endpoint's table.
 */
const PLATFORM_ERRORS: ReadonlyArray<readonly [string, string]> = [
  ['401', 'no credentials, or a token that is invalid or expired (every endpoint that needs a token)'],
  ['403', 'authenticated, but the token lacks the role or belongs to another organisation'],
  ['429', 'rate limited: wait `Retry-After` seconds'],
  ['500', 'an unexpected failure; the request id in `x-request-id` finds it in the log'],
];
const PLATFORM_STATUSES = new Set(PLATFORM_ERRORS.map(([status]) => status));

function platformErrors(): string[] {
  return [
    '## Errors every endpoint may answer',
    '',
    'Every error answers `{statusCode, message, error}`. `message` is a list (one entry per failing field, at most 20) when the request fails its schema validation (400), and one string for every other error. These are listed here once; each endpoint lists the others it may answer.',
    '',
    '| Status | Meaning |',
    '|---|---|',
    ...PLATFORM_ERRORS.map(([status, meaning]) => `| ${status} | ${meaning} |`),
    '',
  ];
}

export function documentationMd(c: Catalogue, title: string, guide: string[] = []): string {
  const out = [`# ${title}`, '', `${counts(c)}. Each section in full: \`/documentation/tag/<section>.md\`.`, '', ...guide, ...platformErrors()];
  for (const s of c.sections) {
    out.push(`## ${s.name}`, '', ...s.endpoints.map(oneLine), '');
  }
  return out.join('\n');
}

function schemaBlock(title: string, schema: unknown): string[] {
  if (!schema) return [];
  return [`**${title}**`, '', '```json', JSON.stringify(schema, null, 2), '```', ''];
}

type Examples = Record<string, { summary?: string; value?: unknown }> | undefined;

function exampleBlocks(title: string, examples: Examples): string[] {
  const out: string[] = [];
  for (const [name, ex] of Object.entries(examples ?? {})) {
    out.push(`**${title}: ${ex.summary ?? name}**`, '', '```json', JSON.stringify(ex.value, null, 2), '```', '');
  }
  return out;
}

export function endpointMd(e: Endpoint): string {
  const op = e.operation as {
    parameters?: Array<{ name: string; in: string; required?: boolean; description?: string; schema?: { type?: unknown }; example?: unknown }>;
    requestBody?: { content?: Record<string, { schema?: unknown; examples?: Examples }> };
    responses?: Record<string, { description?: string; $ref?: string; content?: Record<string, { schema?: unknown; examples?: Examples }> }>;
  };
  const out = [`### ${e.method} ${e.path}`, '', e.summary, ''];
  if (e.description) out.push(e.description, '');
  out.push(`- Section: [${e.tag}](/documentation/tag/${e.section}.md)`, `- Access: ${access(e)}`, '');
  if (op.parameters?.length) {
    out.push('| Parameter | In | Required | Type | Notes |', '|---|---|---|---|---|');
    for (const p of op.parameters) {
      out.push(`| ${p.name} | ${p.in} | ${p.required ? 'yes' : 'no'} | ${String(p.schema?.type ?? '')} | ${p.description ?? ''} |`);
    }
    out.push('');
  }
  for (const [type, media] of Object.entries(op.requestBody?.content ?? {})) {
    out.push(...schemaBlock(`Body (${type})`, media.schema), ...exampleBlocks('Example request', media.examples));
  }
  const responses = Object.entries(op.responses ?? {});
  const own = responses.filter(([status]) => !PLATFORM_STATUSES.has(status));
  if (own.length) {
    out.push('| Status | Meaning |', '|---|---|');
    for (const [status, r] of own) out.push(`| ${status} | ${r.description ?? (r.$ref ? r.$ref.replace(/^.*\/E/, 'error envelope ') : '')} |`);
    out.push('', 'Any endpoint may also answer 401, 403, 429 or 500: see [Errors every endpoint may answer](/documentation.md).', '');
    const ok = responses.find(([s]) => s.startsWith('2'));
    if (ok?.[1].content) {
      const json = ok[1].content['application/json'];
      out.push(...schemaBlock('Answer', json?.schema), ...exampleBlocks(`Example answer (${ok[0]})`, json?.examples));
    }
  }
  return out.join('\n');
}

export function sectionMd(s: Section): string {
  const out = [`# ${s.name}`, '', `${plural(s.endpoints.length, 'endpoint')}.`, ''];
  for (const e of s.endpoints) out.push(endpointMd(e), `[Open this endpoint alone](${endpointLink(e)})`, '');
  return out.join('\n');
}
