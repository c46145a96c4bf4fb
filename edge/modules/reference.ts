// The published reference (spec: Endpoints → Reference and discovery): generated from the live
// route table at start-up, so every route any module registers appears by itself. None of these
// routes needs an orgid or a token.
import { Type } from '@sinclair/typebox';
import { appError } from '../../core/errors.js';
import type { Module } from '../module.js';
import { statusName } from '../../core/errors.js';
import { buildAsyncApi, channelsMd } from '../reference/asyncapi.js';
import { buildCatalogue, type Catalogue, type Endpoint } from '../reference/catalogue.js';
import { ERROR_CASES, guideMd } from '../reference/guide.js';
import { access, counts, documentationMd, endpointMd, llmsTxt, sectionMd } from '../reference/markdown.js';
import { documentationPage } from '../reference/page.js';
import { searchCatalogue } from '../reference/search.js';
import { hostOf, secure } from '../request-origin.js';
import { route, type RouteDef } from '../route.js';

const TITLE = 'Business Platform API';
const TAG = 'Reference';
const MARKDOWN = 'text/markdown; charset=utf-8';

const ERROR_MEANING = new Map(ERROR_CASES);

function endpointJson(e: Endpoint) {
  const responses = (e.operation.responses ?? {}) as Record<string, unknown>;
  const errors = Object.keys(responses)
    .filter((s) => Number(s) >= 400)
    .map((s) => ({ status: Number(s), meaning: ERROR_MEANING.get(s) ?? statusName(Number(s)) }));
  return {
    method: e.method,
    path: e.path,
    summary: e.summary,
    description: e.description,
    tag: e.tag,
    section: e.section,
    access: access(e),
    errors,
    operation: e.operation,
  };
}


const publicRoute = { auth: 'none', tenant: 'none', tag: TAG } as const;

function redirect(path: string): RouteDef {
  return route({
    ...publicRoute,
    method: 'GET',
    path,
    summary: `Redirects to /documentation`,
    status: 302,
    handler: (ctx) => {
      ctx.status = 302;
      ctx.responseHeaders.location = '/documentation';
      ctx.type = 'text/plain; charset=utf-8';
      return 'Found: /documentation';
    },
  });
}

export function referenceRoutes(get: () => Catalogue): RouteDef[] {
  let page: string | undefined;
  return [
    route({
      ...publicRoute,
      method: 'GET',
      path: '/documentation',
      summary: 'Browsable reference with a request runner',
      description: 'Loads the section index first, then one section on demand. Works offline (no CDN).',
      handler: (ctx) => {
        ctx.type = 'text/html; charset=utf-8';
        return (page ??= documentationPage(TITLE, guideMd(ctx.deps.config, counts(get()))));
      },
    }),
    route({
      ...publicRoute,
      method: 'GET',
      path: '/documentation/sections.json',
      summary: 'The section index the reference page loads first',
      response: Type.Object({
        title: Type.String(),
        endpoints: Type.Integer(),
        sections: Type.Array(Type.Object({ name: Type.String(), slug: Type.String(), count: Type.Integer() })),
      }),
      handler: () => {
        const c = get();
        return {
          title: TITLE,
          endpoints: c.endpoints.length,
          sections: c.sections.map((s) => ({ name: s.name, slug: s.slug, count: s.endpoints.length })),
        };
      },
    }),
    route({
      ...publicRoute,
      method: 'GET',
      path: '/documentation/tag/:file',
      summary: 'One section in full: `<slug>.md` as markdown, `<slug>.json` for the reference page',
      description: 'The slug is the section name lowercased with runs of non-alphanumerics replaced by hyphens.',
      params: Type.Object({ file: Type.String({ pattern: '^[a-z0-9-]+\\.(md|json)$' }) }),
      errors: [404],
      handler: (ctx) => {
        const [, slug, ext] = /^([a-z0-9-]+)\.(md|json)$/.exec(ctx.params.file)!;
        // The spec's rule taken literally keeps a hyphen where a name ends in punctuation
        // ("Security (2FA)" → `security-2fa-`); ours trims it. Both name the section.
        const section = get().bySlug.get(slug.replace(/^-+|-+$/g, ''));
        if (!section) throw appError('ERR_NOT_FOUND', `section "${slug}"`);
        if (ext === 'md') {
          ctx.type = MARKDOWN;
          return sectionMd(section);
        }
        ctx.type = 'application/json';
        return JSON.stringify({ name: section.name, slug: section.slug, endpoints: section.endpoints.map(endpointJson) });
      },
    }),
    route({
      ...publicRoute,
      method: 'GET',
      path: '/documentation.md',
      summary: 'Every endpoint, one line each, grouped by section',
      handler: (ctx) => {
        ctx.type = MARKDOWN;
        const c = get();
        return documentationMd(c, TITLE, guideMd(ctx.deps.config, counts(c)).split('\n'));
      },
    }),
    route({
      ...publicRoute,
      method: 'GET',
      path: '/asyncapi.json',
      summary: 'The socket channels as an AsyncAPI 3.0 document',
      description:
        'Both Socket.IO namespaces (`/chat`, `/community-chat`): the handshake `auth`, every event in each direction with its payload schema, and the ack of each client event. Generated from the schemas the server validates payloads with.',
      handler: (ctx) => {
        ctx.type = 'application/json';
        return JSON.stringify(buildAsyncApi(ctx.deps.config, hostOf(ctx.headers), secure(ctx.headers)));
      },
    }),
    route({
      ...publicRoute,
      method: 'GET',
      path: '/documentation/channels.md',
      summary: 'The socket channels in Markdown: every event, its payload fields and its ack',
      handler: (ctx) => {
        ctx.type = MARKDOWN;
        return channelsMd(buildAsyncApi(ctx.deps.config, hostOf(ctx.headers), secure(ctx.headers)));
      },
    }),
    route({
      ...publicRoute,
      method: 'GET',
      path: '/llms.txt',
      summary: 'Short text map of the reference',
      handler: (ctx) => {
        ctx.type = 'text/plain; charset=utf-8';
        return llmsTxt(get(), TITLE);
      },
    }),
    route({
      ...publicRoute,
      method: 'GET',
      path: '/documentation/search',
      summary: 'Search the reference; an exact path match ranks above a word in a summary',
      query: Type.Object({
        q: Type.String({ minLength: 1, maxLength: 200 }),
        limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200 })),
      }),
      response: Type.Object({
        query: Type.String(),
        count: Type.Integer(),
        results: Type.Array(
          Type.Object({
            method: Type.String(),
            path: Type.String(),
            summary: Type.String(),
            tag: Type.String(),
            detail: Type.String(),
            anchor: Type.String({ description: 'The endpoint in the browsable reference' }),
            section: Type.String(),
            score: Type.Number(),
          }),
        ),
      }),
      handler: (ctx) => {
        const results = searchCatalogue(get(), ctx.query.q, ctx.query.limit ?? 50);
        return { query: ctx.query.q, count: results.length, results };
      },
    }),
    route({
      ...publicRoute,
      method: 'GET',
      path: '/documentation/endpoint',
      summary: 'One endpoint in markdown; `format=json` gives the raw operation',
      query: Type.Object({
        method: Type.String({ minLength: 3, maxLength: 7 }),
        path: Type.String({ minLength: 1, maxLength: 500 }),
        format: Type.Optional(Type.Union([Type.Literal('md'), Type.Literal('json')])),
      }),
      errors: [404],
      handler: (ctx) => {
        const key = `${ctx.query.method.toUpperCase()} ${ctx.query.path}`;
        const e = get().byKey.get(key);
        if (!e) throw appError('ERR_NOT_FOUND', `endpoint ${key}`);
        if (ctx.query.format === 'json') {
          ctx.type = 'application/json';
          return JSON.stringify(endpointJson(e));
        }
        ctx.type = MARKDOWN;
        return endpointMd(e);
      },
    }),
    route({
      ...publicRoute,
      method: 'GET',
      path: '/robots.txt',
      summary: 'Allows the reference, disallows the API',
      handler: (ctx) => {
        ctx.type = 'text/plain; charset=utf-8';
        return [
          'User-agent: *',
          'Allow: /documentation',
          'Allow: /documentation.md',
          'Allow: /documentation-json',
          'Allow: /openapi.json',
          'Allow: /llms.txt',
          'Allow: /asyncapi.json',
          'Disallow: /',
          '',
        ].join('\n');
      },
    }),
    redirect('/api-docs'),
    redirect('/docs'),
    redirect('/swagger'),
  ];
}

export const referenceModule: Module = {
  name: 'reference',
  // Built on first read, not at start: with an example for every operation the document takes
  // ~30 ms to build, which every node (and every test server) would otherwise pay unread.
  perNode(deps) {
    let catalogue: Catalogue | undefined;
    return { routes: referenceRoutes(() => (catalogue ??= buildCatalogue(deps.routes, deps.openapi()))) };
  },
};
