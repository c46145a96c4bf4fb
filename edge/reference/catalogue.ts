// The reference catalogue: every endpoint of the live route table with its OpenAPI operation,
// grouped into sections (the route's tag). Built once at start-up, after every module has
// registered its routes, so the reference can never list a route the server does not serve. Routes
// that only redirect (to /documentation) are not listed, as in the OpenAPI document.
import { documented, openApiPath } from '../openapi.js';
import type { RouteDef } from '../route.js';

export interface Endpoint {
  method: string;
  /** The path as clients write it, `:id` style. */
  path: string;
  /** OpenAPI style, `{id}`. */
  apiPath: string;
  tag: string;
  section: string;
  summary: string;
  description: string;
  auth: string;
  roles: string[];
  operation: Record<string, unknown>;
}

export interface Section {
  name: string;
  slug: string;
  endpoints: Endpoint[];
}

export interface Catalogue {
  endpoints: Endpoint[];
  sections: Section[];
  bySlug: Map<string, Section>;
  /** `METHOD /path` (either path style) → endpoint. */
  byKey: Map<string, Endpoint>;
}

/** The spec's slug rule: lowercased, runs of non-alphanumerics replaced by hyphens. */
export function sectionSlug(name: string): string {
  return name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
}

export function buildCatalogue(routes: readonly RouteDef[], openapi: Record<string, unknown>): Catalogue {
  const paths = (openapi.paths ?? {}) as Record<string, Record<string, Record<string, unknown>>>;
  const endpoints: Endpoint[] = routes.filter(documented).map((r) => {
    const apiPath = openApiPath(r.path);
    return {
      method: r.method,
      path: r.path,
      apiPath,
      tag: r.tag,
      section: sectionSlug(r.tag),
      summary: r.summary,
      description: r.description ?? '',
      auth: r.auth,
      roles: r.roles ?? [],
      operation: paths[apiPath]?.[r.method.toLowerCase()] ?? {},
    };
  });
  endpoints.sort((a, b) => a.tag.localeCompare(b.tag) || a.path.localeCompare(b.path) || a.method.localeCompare(b.method));
  const bySlug = new Map<string, Section>();
  for (const e of endpoints) {
    let s = bySlug.get(e.section);
    if (!s) bySlug.set(e.section, (s = { name: e.tag, slug: e.section, endpoints: [] }));
    s.endpoints.push(e);
  }
  const byKey = new Map<string, Endpoint>();
  for (const e of endpoints) {
    byKey.set(`${e.method} ${e.path}`, e);
    byKey.set(`${e.method} ${e.apiPath}`, e);
  }
  return { endpoints, sections: [...bySlug.values()], bySlug, byKey };
}
