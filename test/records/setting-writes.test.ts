// Settings that govern sign-in are Admin's (issue 28, item 5): the `setting` document
// `base-setting` turns PIN sign-in on for the whole organisation, so every write of a `setting`
// record through the record store (create, update, update-partial, delete) needs role Admin, as
// the settings routes do. Before, a plain staff user created it (201). Reads are unchanged.
import t from 'tap';
import { createOrg, staffHeaders, startTestApp } from '../helpers/app.js';
import { request } from '../helpers/http.js';

const app = await startTestApp(t, { modules: ['records'] });
await createOrg(app, 'acme');
const staff = staffHeaders(app, 'acme', ['User']);
const admin = staffHeaders(app, 'acme', ['User', 'Admin']);
const baseSetting = { name: 'base-setting', passcodeLoginSettings: { enable: true, mode: 'pin' } };

const create = (headers: Record<string, string>) =>
  request(app.url, '/repository/create', { headers, body: { datatype: 'setting', isNew: true, data: baseSetting } });

t.test('setting writes - a plain staff user cannot create the base-setting; an Admin can', async (t) => {
  const refused = await create(staff);
  t.equal(refused.status, 403);
  t.match(refused.body.message, /setting records change how people sign in: writing them through the record store needs role Admin/);
  t.equal(app.deps.store.scan('acme', 'setting', {}).length, 0, 'nothing was stored');
  const made = await create(admin);
  t.equal(made.status, 201, 'an Admin creates it');
  t.equal((await request(app.url, '/repository/create', { headers: staff, body: { datatype: 'bm_note', isNew: true, data: { x: 1 } } })).status, 201, 'other datatypes are unchanged');
});

t.test('setting writes - update, update-partial and delete need Admin too; reads do not', async (t) => {
  const rec = (await create(admin)).body;
  const update = (headers: Record<string, string>, version: number) =>
    request(app.url, `/repository/update/setting/${rec.sk}`, { headers, body: { data: { passcodeLoginSettings: { enable: false } }, version } });
  const partial = (headers: Record<string, string>) =>
    request(app.url, `/repository/update-partial/setting/${rec.sk}`, { headers, body: { 'data.passcodeLoginSettings.mode': 'either' } });
  const remove = (headers: Record<string, string>) => request(app.url, `/repository/delete/setting/${rec.sk}`, { method: 'DELETE', headers });

  t.equal((await update(staff, 1)).status, 403, 'update: 403 for plain staff');
  t.equal((await partial(staff)).status, 403, 'update-partial: 403 for plain staff');
  t.equal((await remove(staff)).status, 403, 'delete: 403 for plain staff');
  const read = await request(app.url, `/repository/get/setting/${rec.sk}`, { headers: staff });
  t.equal(read.status, 200, 'plain staff still read it');
  t.same(read.body.data, baseSetting, 'unchanged by the refused writes');
  t.equal(read.body.version, 1);
  const found = await request(app.url, '/repository/find-by-attribute/setting/name/base-setting', { headers: staff });
  t.equal(found.status, 200, 'and find it by name, as the spec reads it');
  t.equal(found.body.total, 2);

  t.equal((await update(admin, 1)).status, 200, 'update: an Admin succeeds');
  t.equal((await partial(admin)).status, 200, 'update-partial: an Admin succeeds');
  t.same((await request(app.url, `/repository/get/setting/${rec.sk}`, { headers: staff })).body.data.passcodeLoginSettings, { enable: false, mode: 'either' });
  t.equal((await remove(admin)).status, 200, 'delete: an Admin succeeds');
});
