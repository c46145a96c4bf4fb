// A client generated from the live /openapi.json: openapi-typescript writes the types, a small
// program written against them with openapi-fetch must type-check under strict TypeScript (so the
// document describes paths, parameters and bodies precisely enough to be used), and then calls real
// routes: sign-up, sign-in, create a record, create an event and a ticket, scan it.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import openapiTS, { astToString } from 'openapi-typescript';
import t from 'tap';
import ts from 'typescript';
import { startTestApp } from '../helpers/app.js';
import { request } from '../helpers/http.js';

// Inside the project (ignored by git) so the program resolves openapi-fetch from node_modules.
const ROOT = resolve('.tap', `generated-client-${process.pid}`);

// The program under test. It only compiles if the generated types know these paths, their
// `orgid` header parameter, and the fields of their bodies and answers.
const PROGRAM = `
import createClient from 'openapi-fetch';
import type { paths } from './api.js';

export interface Outcome {
  orgId: string;
  signedInAs: string;
  recordId: string;
  recordVersion: number;
  eventId: string;
  scanSucceeded: boolean;
  secondScanSucceeded: boolean;
  secondScanReason: string | undefined;
}

export async function run(baseUrl: string): Promise<Outcome> {
  const api = createClient<paths>({ baseUrl });
  const signup = await api.POST('/profile/user/signup', {
    body: { email: 'owner@client.test', password: 'correct-horse-battery', orgName: 'Generated Client Co' },
  });
  if (!signup.data) throw new Error('signup failed: ' + JSON.stringify(signup.error));
  const orgid = signup.data.orgId;
  if (!orgid) throw new Error('signup answered no orgId');

  const signin = await api.POST('/profile/user/signin', {
    params: { header: { orgid } },
    body: { email: 'owner@client.test', password: 'correct-horse-battery' },
  });
  if (!signin.data) throw new Error('signin failed: ' + JSON.stringify(signin.error));
  const token = signin.data.token;
  if (!token) throw new Error('sign-in asked for a second factor');
  const authorization = 'Bearer ' + token;

  const created = await api.POST('/repository/create', {
    params: { header: { orgid } },
    headers: { authorization },
    body: { datatype: 'bm_note', isNew: true, data: { title: 'Made by a generated client' } },
  });
  if (!created.data) throw new Error('create failed: ' + JSON.stringify(created.error));

  const event = await api.POST('/events', {
    params: { header: { orgid } },
    headers: { authorization },
    body: { name: 'Client Fest', ticketTypes: [{ title: 'General', price: 1000, quantity: 10 }] },
  });
  if (!event.data) throw new Error('event failed: ' + JSON.stringify(event.error));
  const eventId: string = event.data.sk;
  const ticket = await api.POST('/events/{id}/tickets', {
    params: { header: { orgid }, path: { id: eventId } },
    headers: { authorization },
    body: { ticketTypeId: event.data.ticketTypes[0].sk, number: 'GEN0001', holderName: 'Grace Hopper' },
  });
  if (!ticket.data) throw new Error('ticket failed: ' + JSON.stringify(ticket.error));

  const scan = await api.POST('/events/checkin', { params: { header: { orgid } }, headers: { authorization }, body: { code: 'GEN0001' } });
  const again = await api.POST('/events/checkin', { params: { header: { orgid } }, headers: { authorization }, body: { code: 'GEN0001' } });
  if (!scan.data || !again.data) throw new Error('scan failed');
  return {
    orgId: orgid,
    signedInAs: signin.data.user?.email ?? '',
    recordId: created.data.sk,
    recordVersion: created.data.version,
    eventId,
    scanSucceeded: scan.data.success,
    secondScanSucceeded: again.data.success,
    secondScanReason: again.data.reason,
  };
}
`;

function typeErrors(files: string[]): string[] {
  const program = ts.createProgram(files, {
    strict: true,
    noEmit: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    skipLibCheck: true,
    types: [],
  });
  return ts.getPreEmitDiagnostics(program).map((d) => {
    const where = d.file && d.start !== undefined ? d.file.getLineAndCharacterOfPosition(d.start) : undefined;
    return `${d.file?.fileName ?? ''}${where ? `:${where.line + 1}` : ''} ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`;
  });
}

t.test('a client generated from /openapi.json type-checks and calls real routes', async (t) => {
  const app = await startTestApp(t);
  const doc = await request(app.url, '/openapi.json');
  t.equal(doc.status, 200);

  mkdirSync(ROOT, { recursive: true });
  t.teardown(() => rmSync(ROOT, { recursive: true, force: true }));
  // package.json marks the folder as ESM so NodeNext resolution treats the .ts files as modules.
  writeFileSync(join(ROOT, 'package.json'), JSON.stringify({ type: 'module' }));
  const types = astToString(await openapiTS(doc.body));
  writeFileSync(join(ROOT, 'api.d.ts'), types);
  writeFileSync(join(ROOT, 'client.ts'), PROGRAM);
  t.match(types, /"\/events\/checkin": \{/, 'the generated types list the scan route');

  const errors = typeErrors([join(ROOT, 'client.ts')]);
  t.same(errors, [], 'the program written against the generated types type-checks');

  // Wrong on purpose: a field the document does not allow, a path it does not have.
  writeFileSync(
    join(ROOT, 'wrong.ts'),
    `import createClient from 'openapi-fetch';
import type { paths } from './api.js';
const api = createClient<paths>({ baseUrl: 'http://x' });
void api.POST('/events/checkin', { params: { header: { orgid: 'a' } }, body: { code: 1 } });
void api.GET('/no/such/path');
`,
  );
  t.ok(typeErrors([join(ROOT, 'wrong.ts')]).length >= 2, 'the generated types reject a wrong body type and an unknown path');

  // It runs as tsc would emit it (the test process has no TypeScript loader in the transpiled tree
  // npm test runs).
  const js = ts.transpileModule(PROGRAM, { compilerOptions: { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ESNext } }).outputText;
  writeFileSync(join(ROOT, 'client.js'), js);
  const mod = (await import(pathToFileURL(join(ROOT, 'client.js')).href)) as {
    run(baseUrl: string): Promise<Record<string, unknown>>;
  };
  const out = await mod.run(app.url);
  t.match(out, {
    orgId: /\S/,
    signedInAs: 'owner@client.test',
    recordId: /^[0-9a-f]{24}$/,
    recordVersion: 1,
    eventId: /^[0-9a-f]{24}$/,
    scanSucceeded: true,
    secondScanSucceeded: false,
    secondScanReason: /\S/,
  });
  const stored = app.deps.store.getRecord(String(out.orgId), 'bm_note', String(out.recordId));
  t.match(stored, { data: { title: 'Made by a generated client' } }, 'the record is really stored');
});
