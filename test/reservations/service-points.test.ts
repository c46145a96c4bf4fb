import t from 'tap';
import { occupyServicePoint, setServicePointStatus } from '../../actors/service-points/index.js';
import { storefrontSettingsOf } from '../../actors/org-settings/index.js';
import { createOrg } from '../helpers/app.js';
import { signupCustomer, signupOrg } from '../helpers/auth.js';
import { request } from '../helpers/http.js';
import { caller, seed, sharedApp, venue } from './world.js';

const shared = await sharedApp(t, { modules: ['auth', 'checkin', 'records'] });

t.test('service points - staff create, customers read; customers change them (spec: Auth customer) unless the organisation requires staff', async (t) => {
  const v = await venue(t, { shared });
  const created = await v.staff.post('/crm/reservations/service-point/create', {
    name: 'Table 1',
    businessLocationId: 'downtown',
    capacity: 4,
    section: 'terrace',
  });
  t.equal(created.status, 201);
  t.match(created.body, { datatype: 'service_point', version: 1, state: 'available' });
  t.same(created.body.data, { name: 'Table 1', businessLocationId: 'downtown', capacity: 4, section: 'terrace', status: 'available' });

  const list = await v.alice.get('/crm/reservations/service-point/get?businessLocationId=downtown');
  t.equal(list.status, 200, 'customers read them');
  t.equal(list.body.total, 1);
  const one = await v.alice.get(`/crm/reservations/service-point/get/${created.body.sk}`);
  t.equal(one.body.data.name, 'Table 1');
  t.equal((await v.alice.get('/crm/reservations/service-point/get/ffffffffffffffffffffffff')).status, 404);

  // By default (spec: Auth `customer`, any authenticated customer or staff token) a customer may.
  const custCreate = await v.alice.post('/crm/reservations/service-point/create', { name: 'Patio 1', businessLocationId: 'downtown' });
  t.equal(custCreate.status, 201, 'a customer creates');
  const custUpdate = await v.alice.post('/crm/reservations/service-point/update', { id: custCreate.body.sk, status: 'reserved' });
  t.same([custUpdate.status, custUpdate.body.data.status], [200, 'reserved'], 'a customer updates');
  const custDelete = await v.alice.del(`/crm/reservations/service-point/delete/${custCreate.body.sk}`);
  t.same([custDelete.status, custDelete.body], [200, { deleted: true, id: custCreate.body.sk }], 'a customer deletes');
  const anon = await request(v.app.url, '/crm/reservations/service-point/get', { headers: { orgid: v.org } });
  t.equal(anon.status, 401);
  t.equal((await request(v.app.url, '/crm/reservations/service-point/create', { method: 'POST', body: { name: 'X', businessLocationId: 'downtown' }, headers: { orgid: v.org } })).status, 401, 'a token is still needed');

  // The organisation setting servicePointsRequireStaffToken: Admin or ConfigAdmin set it.
  const admin = caller(v.app, v.org, { kind: 'staff', sub: 'admin-1', roles: ['User', 'Admin'] });
  t.same((await admin.get('/crm/reservations/settings')).body, { servicePointsRequireStaffToken: false }, 'off by default');
  t.equal((await v.staff.put('/crm/reservations/settings', { servicePointsRequireStaffToken: true })).status, 403, 'a plain staff token may not');
  t.equal((await admin.put('/crm/reservations/settings', { servicePointsRequireStaffToken: 'yes' })).status, 400);
  const on = await admin.put('/crm/reservations/settings', { servicePointsRequireStaffToken: true });
  t.same([on.status, on.body], [200, { servicePointsRequireStaffToken: true }]);
  const refused = [
    await v.alice.post('/crm/reservations/service-point/create', { name: 'Sneaky', businessLocationId: 'downtown' }),
    await v.alice.post('/crm/reservations/service-point/update', { id: created.body.sk, status: 'reserved' }),
    await v.alice.del(`/crm/reservations/service-point/delete/${created.body.sk}`),
  ];
  t.same(refused.map((r) => r.status), [403, 403, 403], 'customers may not change a venue once it is on');
  t.match(refused[0].body.message, /requires a staff token to change service points \(servicePointsRequireStaffToken\)/);
  t.equal((await v.alice.get('/crm/reservations/service-point/get?businessLocationId=downtown')).status, 200, 'reads stay open to customers');
  const byStaff = await v.staff.post('/crm/reservations/service-point/update', { id: created.body.sk, capacity: 6 });
  t.same([byStaff.status, byStaff.body.data.capacity], [200, 6], 'staff still change them');
  t.same((await admin.get('/crm/reservations/settings')).body, { servicePointsRequireStaffToken: true });
  t.same(storefrontSettingsOf(v.app.deps.store.getOrg(v.org)), { posRequiresStaffToken: false }, 'the storefront setting is its own');
});

t.test('service points - validation, unique names per location, slug not sk, unknown location', async (t) => {
  const v = await venue(t, { shared });
  await seed(v.app, v.org, 'location', { name: 'uptown', timezone: 'Europe/Berlin' });
  const noName = await v.staff.post('/crm/reservations/service-point/create', { businessLocationId: 'downtown' });
  t.equal(noName.status, 400);
  t.same(noName.body.message, ['body/name is required']);
  const badStatus = await v.staff.post('/crm/reservations/service-point/create', { name: 'T', businessLocationId: 'downtown', status: 5 });
  t.equal(badStatus.status, 400);
  t.match(badStatus.body.message, ['body/status must be string']);
  t.equal((await v.staff.post('/crm/reservations/service-point/create', { name: 'Bar 1', businessLocationId: 'downtown' })).status, 201);
  const dup = await v.staff.post('/crm/reservations/service-point/create', { name: 'bar 1', businessLocationId: 'downtown' });
  t.equal(dup.status, 409, 'names are unique per location, without case');
  const elsewhere = await v.staff.post('/crm/reservations/service-point/create', { name: 'Bar 1', businessLocationId: 'uptown' });
  t.equal(elsewhere.status, 201, 'the same name at another location is fine');
  const bySk = await v.staff.post('/crm/reservations/service-point/create', { name: 'T9', businessLocationId: v.location.sk });
  t.equal(bySk.status, 400);
  t.match(bySk.body.message, /must be the location slug \("downtown"\)/);
  const unknown = await v.staff.post('/crm/reservations/service-point/create', { name: 'T9', businessLocationId: 'nowhere' });
  t.equal(unknown.status, 404);
  const bySkList = await v.staff.get(`/crm/reservations/service-point/get?businessLocationId=${v.location.sk}`);
  t.same([bySkList.status, bySkList.body.total], [200, 0], 'an sk as businessLocationId lists nothing, no error');
});

t.test('service points - update by sk with versions; delete; occupied points are kept', async (t) => {
  const v = await venue(t, { shared });
  const p = (await v.staff.post('/crm/reservations/service-point/create', { name: 'Table 2', businessLocationId: 'downtown' })).body;
  const other = (await v.staff.post('/crm/reservations/service-point/create', { name: 'Table 3', businessLocationId: 'downtown' })).body;
  const upd = await v.staff.post('/crm/reservations/service-point/update', { id: p.sk, name: 'Table 2A', status: 'out-of-order', version: 1 });
  t.equal(upd.status, 200);
  t.match(upd.body, { sk: p.sk, version: 2, data: { name: 'Table 2A', status: 'out-of-order' } });
  t.equal((await v.staff.post('/crm/reservations/service-point/update', { id: p.sk, name: 'x', version: 1 })).status, 409, 'stale version');
  t.equal((await v.staff.post('/crm/reservations/service-point/update', { id: p.sk, name: 'Table 3' })).status, 409, 'name taken');
  const move = await v.staff.post('/crm/reservations/service-point/update', { id: p.sk, businessLocationId: 'uptown' });
  t.equal(move.status, 400, 'the location cannot change');
  t.equal((await v.staff.post('/crm/reservations/service-point/update', { id: 'ffffffffffffffffffffffff', name: 'x' })).status, 404);
  t.equal((await v.staff.post('/crm/reservations/service-point/update', { name: 'x' })).status, 400, 'id is required');

  const walk = await v.staff.post('/checkin/walk-in', { businessLocationId: 'downtown', name: 'Guest' });
  t.equal((await v.staff.post(`/checkin/${walk.body.sk}/assign`, { servicePointId: 'Table 3' })).status, 200);
  const busy = await v.staff.del(`/crm/reservations/service-point/delete/${other.sk}`);
  t.equal(busy.status, 409, 'a guest is being served there');
  const del = await v.staff.del(`/crm/reservations/service-point/delete/${p.sk}`);
  t.same([del.status, del.body], [200, { deleted: true, id: p.sk }]);
  t.equal((await v.staff.get(`/crm/reservations/service-point/get/${p.sk}`)).status, 404);
  t.equal((await v.staff.del(`/crm/reservations/service-point/delete/${p.sk}`)).status, 404);
});

t.test('service points - a customer of an organisation signed up now may not change them (403, 401 without a token); of one signed up open, may', async (t) => {
  const app = shared.app;
  for (const openStorefront of [false, true]) {
    const owner = await signupOrg(app, { email: `owner-${openStorefront}@sp.example`, orgName: 'SP', ...(openStorefront ? { openStorefront } : {}) });
    const guest = await signupCustomer(app, owner.orgId, { email: `guest-${openStorefront}@sp.example` });
    const as = (token: string | undefined) => (method: string, path: string, body?: unknown) =>
      request(app.url, path, { method, body, headers: { orgid: owner.orgId, ...(token ? { authorization: `Bearer ${token}` } : {}) } });
    const staff = as(owner.token);
    const cust = as(guest.token);
    await staff('POST', '/repository/create', { datatype: 'location', isNew: true, data: { name: 'downtown', timezone: 'Europe/Berlin' } });
    const p = (await staff('POST', '/crm/reservations/service-point/create', { name: 'Table 1', businessLocationId: 'downtown' })).body;
    t.ok(p.sk, `${openStorefront ? 'open' : 'new'}: staff create one`);
    const want = openStorefront ? 200 : 403;
    const mode = openStorefront ? 'open' : 'new';
    t.equal((await cust('POST', '/crm/reservations/service-point/update', { id: p.sk, name: 'Renamed' })).status, want, `${mode}: a customer updates`);
    t.equal((await cust('DELETE', `/crm/reservations/service-point/delete/${p.sk}`)).status, want, `${mode}: a customer deletes`);
    t.equal((await cust('POST', '/crm/reservations/service-point/create', { name: 'Patio', businessLocationId: 'downtown' })).status, openStorefront ? 201 : 403, `${mode}: a customer creates`);
    t.equal((await as(undefined)('POST', '/crm/reservations/service-point/update', { id: p.sk, name: 'X' })).status, 401, `${mode}: no token`);
    if (!openStorefront) {
      t.equal((await staff('GET', `/crm/reservations/service-point/get/${p.sk}`)).body.data.name, 'Table 1', 'untouched');
      t.equal((await staff('POST', '/crm/reservations/service-point/update', { id: p.sk, capacity: 4 })).status, 200, 'staff may');
    }
  }
});

t.test('service points - tenant isolation', async (t) => {
  const v = await venue(t, { shared });
  const p = (await v.staff.post('/crm/reservations/service-point/create', { name: 'Table 1', businessLocationId: 'downtown' })).body;
  await createOrg(v.app, `${v.org}-rival`);
  const rival = caller(v.app, `${v.org}-rival`, { kind: 'staff', sub: 'rival-staff' });
  t.equal((await rival.get(`/crm/reservations/service-point/get/${p.sk}`)).status, 404);
  t.equal((await rival.get('/crm/reservations/service-point/get')).body.total, 0);
  t.equal((await rival.post('/crm/reservations/service-point/update', { id: p.sk, status: 'reserved' })).status, 404);
  t.equal((await rival.del(`/crm/reservations/service-point/delete/${p.sk}`)).status, 404);
  t.equal((await v.staff.get(`/crm/reservations/service-point/get/${p.sk}`)).body.data.status, 'available', 'untouched');
});

t.test('setServicePointStatus - the storefront writes status through the same actor', async (t) => {
  const v = await venue(t, { shared });
  const p = (await v.staff.post('/crm/reservations/service-point/create', { name: 'Booth', businessLocationId: 'downtown' })).body;
  const deps = { runtime: v.app.deps.runtime, store: v.app.deps.store };
  const dirty = await setServicePointStatus(deps, v.org, { servicePointId: p.sk, status: 'dirty' });
  t.match(dirty, { sk: p.sk, version: 2, data: { status: 'dirty' } });
  const byName = await setServicePointStatus(deps, v.org, { servicePointId: 'Booth', status: 'reserved', businessLocationId: 'downtown' });
  t.equal(byName.data.status, 'reserved');
  const walk = await v.staff.post('/checkin/walk-in', { businessLocationId: 'downtown', phone: '+1555' });
  const refused = await v.staff.post(`/checkin/${walk.body.sk}/assign`, { servicePointId: 'Booth' });
  t.equal(refused.status, 409, 'assign sees the storefront status');
  const unknown = await setServicePointStatus(deps, v.org, { servicePointId: 'Nope', status: 'dirty' }).catch((e: { statusCode: number }) => e);
  t.equal((unknown as { statusCode: number }).statusCode, 404);
  const blank = await setServicePointStatus(deps, v.org, { servicePointId: p.sk, status: '' }).catch((e: { statusCode: number }) => e);
  t.equal((blank as { statusCode: number }).statusCode, 400);
});

t.test('service-points actor - concurrent occupy, status writes and renames of one point are serialized', async (t) => {
  const v = await venue(t, { shared });
  const p = (await v.staff.post('/crm/reservations/service-point/create', { name: 'Bar stool', businessLocationId: 'downtown' })).body;
  const rt = v.app.deps.runtime;
  const outcomes = await Promise.all(
    Array.from({ length: 20 }, (_, i) =>
      occupyServicePoint(rt, v.org, 'downtown', i % 2 ? p.sk : 'Bar stool', `task-${i}`).then(
        () => 'ok',
        (e: { statusCode: number }) => e.statusCode,
      ),
    ),
  );
  t.equal(outcomes.filter((o) => o === 'ok').length, 1, 'exactly one occupies it');
  t.equal(outcomes.filter((o) => o === 409).length, 19);
  const stored = v.app.deps.store.getRecord(v.org, 'service_point', p.sk)!;
  t.equal(stored.version, 2, 'one write');
  // Mixed writers at once: each applies on top of the previous one, none is lost to a stale version.
  const deps = { runtime: rt, store: v.app.deps.store };
  await Promise.all([
    setServicePointStatus(deps, v.org, { servicePointId: p.sk, status: 'dirty' }),
    v.staff.post('/crm/reservations/service-point/update', { id: p.sk, label: 'near the window' }),
    setServicePointStatus(deps, v.org, { servicePointId: p.sk, status: 'available' }),
  ]);
  const after = v.app.deps.store.getRecord(v.org, 'service_point', p.sk)!;
  t.equal(after.version, 5);
  t.equal(after.data.label, 'near the window');
  t.equal(after.data.status, 'available');
});
