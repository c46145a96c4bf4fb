import t from 'tap';
import { assertStaffOnly, messages, setup } from './setup.js';

t.test('leads - create, read, list with filters and search, update, delete', async (t) => {
  const env = await setup(t, { modules: ['crm'] });
  const { a, b } = env;

  const c1 = await a.post('/crm/leads/detail', { name: 'Ana Lima', email: 'Ana@Example.com', company: 'Lima Foods', owner: 'Rep@acme.test', value: 1200 });
  t.equal(c1.status, 201);
  t.equal(c1.body.datatype, 'lead');
  t.equal(c1.body.version, 1);
  t.equal(c1.body.data.status, 'new', 'status defaults to new');
  t.equal(c1.body.data.email, 'ana@example.com', 'email lower-cased');
  t.equal(c1.body.data.owner, 'rep@acme.test');
  const c2 = await a.post('/crm/leads/detail', { name: 'Bo Chen', status: 'qualified', notes: 'met at the trade fair', source: 'fair', custom: { x: 1 } });
  t.equal(c2.status, 201);
  t.same(c2.body.data.custom, { x: 1 }, 'fields beyond the documented ones are kept');
  await a.post('/crm/leads/detail', { name: 'Cy Dorn', status: 'qualified', owner: 'rep@acme.test' });

  const one = await a.get(`/crm/leads/detail/${c1.body.sk}`);
  t.equal(one.status, 200);
  t.equal(one.body.data.name, 'Ana Lima');

  const all = await a.get('/crm/leads/detail');
  t.equal(all.body.total, 3);
  t.same(all.body.data.map((r: any) => r.data.name), ['Cy Dorn', 'Bo Chen', 'Ana Lima'], 'newest first');
  t.equal(all.body.hasNext, false);

  const qualified = await a.get('/crm/leads/detail?status=qualified');
  t.same(qualified.body.data.map((r: any) => r.data.name).sort(), ['Bo Chen', 'Cy Dorn']);
  const owned = await a.get('/crm/leads/detail?owner=REP@acme.test&status=qualified');
  t.same(owned.body.data.map((r: any) => r.data.name), ['Cy Dorn'], 'owner and status combine');
  const search = await a.get('/crm/leads/detail?q=trade%20FAIR');
  t.same(search.body.data.map((r: any) => r.data.name), ['Bo Chen'], 'q searches notes, case-insensitively');
  const byCompany = await a.get('/crm/leads/detail?q=lima%20f');
  t.same(byCompany.body.data.map((r: any) => r.data.name), ['Ana Lima']);
  const regexSafe = await a.get('/crm/leads/detail?q=' + encodeURIComponent('.*'));
  t.equal(regexSafe.body.total, 0, 'q is literal text, not a regular expression');
  const paged = await a.get('/crm/leads/detail?pageSize=2&page=2&sort=data.name&sortType=asc');
  t.same(paged.body.data.map((r: any) => r.data.name), ['Cy Dorn']);
  t.equal(paged.body.total, 3);
  t.equal(paged.body.page, 2);

  const upd = await a.put(`/crm/leads/detail/${c1.body.sk}`, { version: 1, data: { status: 'contacted', company: null } });
  t.equal(upd.status, 200);
  t.equal(upd.body.version, 2);
  t.equal(upd.body.data.status, 'contacted');
  t.notOk('company' in upd.body.data, 'null removes a field');
  t.equal(upd.body.data.name, 'Ana Lima', 'untouched fields stay');

  // Tenant isolation: B sees nothing of A and cannot touch it.
  t.equal((await b.get('/crm/leads/detail')).body.total, 0);
  t.equal((await b.get(`/crm/leads/detail/${c1.body.sk}`)).status, 404);
  t.equal((await b.put(`/crm/leads/detail/${c1.body.sk}`, { version: 2, data: { status: 'won' } })).status, 404);
  t.equal((await b.del(`/crm/leads/detail/${c1.body.sk}`)).status, 404);

  const del = await a.del(`/crm/leads/detail/${c1.body.sk}`);
  t.equal(del.status, 200);
  t.same(del.body, { id: c1.body.sk, deleted: true });
  t.equal((await a.get(`/crm/leads/detail/${c1.body.sk}`)).status, 404);
  t.equal((await a.del(`/crm/leads/detail/${c1.body.sk}`)).status, 404);
  t.equal((await a.get('/crm/leads/detail')).body.total, 2);
});

t.test('leads - PUT with a stale version is a 409 and writes nothing', async (t) => {
  const { a } = await setup(t, { modules: ['crm'] });
  const c = await a.post('/crm/leads/detail', { name: 'Dee' });
  const id = c.body.sk;
  const first = await a.put(`/crm/leads/detail/${id}`, { version: 1, data: { status: 'contacted' } });
  t.equal(first.status, 200);
  const stale = await a.put(`/crm/leads/detail/${id}`, { version: 1, data: { status: 'lost' } });
  t.equal(stale.status, 409);
  t.equal(stale.body.error, 'Conflict');
  t.match(stale.body.message, /version/);
  const now = await a.get(`/crm/leads/detail/${id}`);
  t.equal(now.body.data.status, 'contacted', 'the stale write changed nothing');
  t.equal(now.body.version, 2);

  // Two writers with the same version at once: exactly one wins.
  const [x, y] = await Promise.all([
    a.put(`/crm/leads/detail/${id}`, { version: 2, data: { status: 'won' } }),
    a.put(`/crm/leads/detail/${id}`, { version: 2, data: { status: 'lost' } }),
  ]);
  t.same([x.status, y.status].sort(), [200, 409]);
  t.equal((await a.get(`/crm/leads/detail/${id}`)).body.version, 3);

  const staleDelete = await a.del(`/crm/leads/detail/${id}?version=1`);
  t.equal(staleDelete.status, 409, 'a version-checked delete refuses a stale version');
  t.equal((await a.get(`/crm/leads/detail/${id}`)).status, 200);
});

t.test('leads - validation names the fields', async (t) => {
  const { a } = await setup(t, { modules: ['crm'] });
  const r = await a.post('/crm/leads/detail', { email: 'not-an-email', value: -3 });
  t.equal(r.status, 400);
  t.match(messages(r), /body\/name is required/);
  t.match(messages(r), /body\/email/);
  t.match(messages(r), /body\/value/);
  const c = await a.post('/crm/leads/detail', { name: 'Eve' });
  const noVersion = await a.put(`/crm/leads/detail/${c.body.sk}`, { data: { status: 'x' } });
  t.equal(noVersion.status, 400);
  t.match(messages(noVersion), /body\/version is required/);
  const empty = await a.put(`/crm/leads/detail/${c.body.sk}`, { version: 1, data: {} });
  t.equal(empty.status, 400, 'an update must change something');
  const dropName = await a.put(`/crm/leads/detail/${c.body.sk}`, { version: 1, data: { name: null } });
  t.equal(dropName.status, 400);
  t.match(messages(dropName), /name/);
  t.equal((await a.get('/crm/leads/detail/not-an-id')).status, 400);
  const badQuery = await a.get('/crm/leads/detail?sort=data.secret&page=0');
  t.equal(badQuery.status, 400);
  t.match(messages(badQuery), /query\/sort/);
  t.match(messages(badQuery), /query\/page/);
});

t.test('leads - staff only', async (t) => {
  const env = await setup(t, { modules: ['crm'] });
  const id = (await env.a.post('/crm/leads/detail', { name: 'F' })).body.sk;
  await assertStaffOnly(t, env, 'get', '/crm/leads/detail');
  await assertStaffOnly(t, env, 'post', '/crm/leads/detail', { name: 'G' });
  await assertStaffOnly(t, env, 'get', `/crm/leads/detail/${id}`);
  await assertStaffOnly(t, env, 'put', `/crm/leads/detail/${id}`, { version: 1, data: { status: 'x' } });
  await assertStaffOnly(t, env, 'del', `/crm/leads/detail/${id}`);
  t.equal((await env.a.get(`/crm/leads/detail/${id}`)).body.version, 1, 'refused calls changed nothing');
});
