import SwaggerParser from '@apidevtools/swagger-parser';
import t from 'tap';
import { documented } from '../../edge/openapi.js';
import { sectionSlug } from '../../edge/reference/catalogue.js';
import { startTestApp } from '../helpers/app.js';
import { request } from '../helpers/http.js';

t.test('reference', async (t) => {
  const app = await startTestApp(t);
  const url = app.url;
  // Routes that only redirect to /documentation are served but not documented.
  const routes = app.deps.routes.filter(documented);
  const redirects = app.deps.routes.filter((r) => !documented(r));
  const tags = new Set(routes.map((r) => r.tag));

  t.test('OpenAPI document: valid, and exactly the live route table, at both addresses', async (t) => {
    const doc = (await request(url, '/openapi.json')).body;
    t.same((await request(url, '/documentation-json')).body, doc);
    await SwaggerParser.validate(structuredClone(doc));
    const listed: string[] = [];
    const ids = new Set<string>();
    for (const [p, ops] of Object.entries<Record<string, any>>(doc.paths)) {
      for (const [m, op] of Object.entries<any>(ops)) {
        listed.push(`${m.toUpperCase()} ${p}`);
        t.ok(op.operationId && !ids.has(op.operationId), `${m} ${p} has a unique operationId`);
        ids.add(op.operationId);
        t.ok(op.tags?.length === 1 && op.summary, `${m} ${p} has a section and a summary`);
        t.ok(op.security, `${m} ${p} declares its security`);
      }
    }
    t.same(listed.sort(), routes.map((r) => `${r.method} ${r.path.replace(/:([A-Za-z0-9_]+)/g, '{$1}')}`).sort());
    t.same(redirects.map((r) => r.path).sort(), ['/api-docs', '/docs', '/swagger'], 'the redirect-only routes are the ones left out');
    t.match(doc.info.description, new RegExp(`${routes.length} endpoints in ${tags.size} sections`));
  });

  t.test('no orgid or token needed anywhere in the reference', async (t) => {
    for (const p of ['/documentation', '/documentation.md', '/llms.txt', '/robots.txt', '/openapi.json', '/documentation/sections.json', '/documentation/search?q=health']) {
      t.equal((await request(url, p)).status, 200, p);
    }
  });

  t.test('/documentation.md lists every endpoint once, grouped by section, with the counts', async (t) => {
    const r = await request(url, '/documentation.md');
    t.match(r.headers['content-type'], /text\/markdown/);
    for (const route of routes) t.ok(r.text.includes(`\`${route.method} ${route.path}\``), `${route.method} ${route.path}`);
    const lines = r.text.split('\n').filter((l) => l.startsWith('- `'));
    t.equal(lines.length, routes.length, 'one line each');
    t.match(r.text, new RegExp(`${routes.length} endpoints in ${tags.size} sections`));
    for (const tag of tags) t.ok(r.text.includes(`## ${tag}`), `section ${tag}`);
    // Errors, case 9: the platform-wide statuses once here, not in each endpoint's table.
    const platform = r.text.slice(r.text.indexOf('## Errors every endpoint may answer'));
    for (const status of ['401', '403', '429', '500']) t.match(platform, new RegExp(`\\| ${status} \\|`), `${status} catalogued once`);
    const one = await request(url, '/documentation/endpoint?method=POST&path=' + encodeURIComponent('/repository/create'));
    t.match(one.text, /\| 409 \|/, 'its own errors stay in its table');
    t.notMatch(one.text, /\| (401|403|429|500) \|/, 'the platform-wide ones are not repeated');
    t.match(one.text, /Any endpoint may also answer 401, 403, 429 or 500/);
  });

  t.test('/llms.txt is a short map linking every section', async (t) => {
    const r = await request(url, '/llms.txt');
    t.match(r.headers['content-type'], /text\/plain/);
    for (const tag of tags) t.ok(r.text.includes(`/documentation/tag/${sectionSlug(tag)}.md`));
    t.ok(r.text.length < 20_000);
  });

  t.test('the section slug rule, and a section in full', async (t) => {
    t.equal(sectionSlug('Check-in queue'), 'check-in-queue');
    t.equal(sectionSlug('Applications & API keys'), 'applications-api-keys');
    t.equal(sectionSlug('  CRM (staff) / Leads '), 'crm-staff-leads');
    const r = await request(url, '/documentation/tag/reference.md');
    t.equal(r.status, 200);
    t.match(r.text, /^# Reference/);
    t.match(r.text, /### GET \/documentation\/search/);
    const ops = routes.filter((x) => x.tag === 'Reference').length;
    t.match(r.text, new RegExp(`${ops} endpoints`));
    const json = await request(url, '/documentation/tag/operations.json');
    t.equal(json.status, 200);
    t.same(json.body.endpoints.map((e: any) => e.path).sort(), routes.filter((x) => x.tag === 'Operations').map((x) => x.path).sort());
    t.equal((await request(url, '/documentation/tag/no-such-section.md')).status, 404);
    t.equal((await request(url, '/documentation/tag/..%2F..%2Fetc.md')).status, 400);
    // A name ending in punctuation: the spec's rule taken literally keeps a trailing hyphen.
    t.equal(sectionSlug('Security (2FA)'), 'security-2fa');
    const literal = await request(url, '/documentation/tag/security-2fa-.md');
    t.equal(literal.status, 200);
    t.match(literal.text, /^# Security \(2FA\)/);
  });

  t.test('search: shape, and an exact path ranks above a word in a summary', async (t) => {
    const r = await request(url, '/documentation/search?q=%2Fmetrics');
    t.equal(r.status, 200);
    t.same(Object.keys(r.body).sort(), ['count', 'query', 'results']);
    t.equal(r.body.query, '/metrics');
    t.equal(r.body.count, r.body.results.length);
    t.equal(r.body.results[0].path, '/metrics', 'the exact path first');
    t.same(Object.keys(r.body.results[0]).sort(), ['anchor', 'detail', 'method', 'path', 'score', 'section', 'summary', 'tag']);
    t.equal(r.body.results[0].anchor, '/documentation#/op/GET/metrics');
    // "metrics" is also a word in another route's summary; the path match must outrank it.
    const word = await request(url, '/documentation/search?q=metrics');
    t.equal(word.body.results[0].path, '/metrics');
    const readiness = await request(url, '/documentation/search?q=readiness');
    t.equal(readiness.body.results[0].path, '/readyz', 'a summary word finds its route');
    // Words of a path written apart: "sign up" means /signup, not a summary that says "up".
    const signUp = await request(url, '/documentation/search?q=sign%20up');
    t.match(signUp.body.results[0].path, /\/signup$/, 'a path with the words joined ranks first');
    t.ok(signUp.body.results.findIndex((x: any) => x.path === '/healthz') === -1 || signUp.body.results.findIndex((x: any) => x.path === '/healthz') > signUp.body.results.findIndex((x: any) => x.path === '/profile/user/signup'));
    const scan = await request(url, '/documentation/search?q=POST%20%2Fevents%2Fcheckin');
    t.equal(scan.body.results[0].path, '/events/checkin', 'method and path first');
    // A path match outranks a summary match, a summary match a description match.
    const checkin = await request(url, '/documentation/search?q=checkin');
    t.same([checkin.body.results[0].method, checkin.body.results[0].path], ['POST', '/events/checkin'], 'the path named for the word first');
    const settle = await request(url, '/documentation/search?q=settle');
    t.match(settle.body.results[0].path, /settle/);
    const none = await request(url, '/documentation/search?q=zzzqqq');
    t.same(none.body, { query: 'zzzqqq', count: 0, results: [] });
    t.equal((await request(url, '/documentation/search')).status, 400, 'q is required');
  });

  t.test('endpoint lookup in markdown and JSON, by either path style', async (t) => {
    const md = await request(url, '/documentation/endpoint?method=GET&path=' + encodeURIComponent('/documentation/tag/:file'));
    t.equal(md.status, 200);
    t.match(md.headers['content-type'], /text\/markdown/);
    t.match(md.text, /### GET \/documentation\/tag\/:file/);
    t.match(md.text, /\| file \| path \| yes \|/);
    const json = await request(url, '/documentation/endpoint?method=get&format=json&path=' + encodeURIComponent('/documentation/tag/{file}'));
    t.equal(json.status, 200);
    t.equal(json.body.operation.operationId, 'getDocumentationTagByFile');
    t.equal(json.body.section, 'reference');
    t.equal((await request(url, '/documentation/endpoint?method=GET&path=%2Fnope')).status, 404);
  });

  t.test('redirects and robots', async (t) => {
    for (const p of ['/api-docs', '/docs', '/swagger']) {
      const r = await request(url, p);
      t.equal(r.status, 302, p);
      t.equal(r.headers.location, '/documentation');
    }
    const robots = await request(url, '/robots.txt');
    t.match(robots.text, /Allow: \/documentation/);
    t.match(robots.text, /Disallow: \/\n/);
  });
});
