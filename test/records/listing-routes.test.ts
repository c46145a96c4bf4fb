// The routes' listings a module declares (Module.listings) beyond an event's tickets: leads by owner,
// support tickets, chats, a person's activity, tasks by status, finished check-in tasks, an event's
// participants, sessions and media; events, a subject's notes, passcode cards, API keys, reservation
// definitions and a location's service points. Each filter a route builds is read by index (exactly, or a
// listing narrowed while small), page by page equal to the store's full sorted read, total exact.
import t from 'tap';
import { sortRecords, type Filter } from '../../core/store/query.js';
import type { StoredRecord } from '../../core/store/record.js';
import { WriteBatch } from '../../core/store/store.js';
import { createOrg, startTestApp, tokenFor } from '../helpers/app.js';
import { client } from '../helpers/http.js';
import { EPOCH } from './listing-kit.js';

const app = await startTestApp(t, { modules: ['crm', 'workflow', 'chat', 'checkin', 'reservations', 'events', 'records', 'auth'] });
const org = 'acme';
await createOrg(app, org);
const store = app.deps.store;
const staff = client(app.url, { orgid: org, authorization: `Bearer ${tokenFor(app, { org, sub: 'staff-1', roles: ['User', 'Admin'] })}` });

let n = 0;
function rec(datatype: string, i: number, data: Record<string, unknown>): StoredRecord {
  // Runs of three share one createdate; ids not in creation order.
  const iso = new Date(EPOCH + Math.floor(i / 3) * 41_000).toISOString();
  n++;
  return { pk: org, sk: `r${String((n * 7919) % 1_000_003).padStart(8, '0')}${n}`, datatype, version: 1, state: 'new', createdate: iso, modifydate: iso, data };
}

const pick = <T>(xs: readonly T[], i: number) => xs[i % xs.length];
const at = (i: number) => new Date(EPOCH + (i % 97) * 13_000 + Math.floor(i / 97) * 3_600_000).toISOString();

const rs: StoredRecord[] = [];
for (let i = 0; i < 1500; i++) {
  rs.push(rec('lead', i, { name: `L${i}`, status: pick(['new', 'won', 'lost'], i), owner: pick(['ann@x.io', 'bob@x.io'], i >> 1) }));
  rs.push(rec('support_ticket', i, { subject: `S${i}`, status: pick(['open', 'pending', 'closed'], i), priority: pick(['low', 'high'], i), assignee: pick(['ann@x.io', 'bob@x.io', 'cy@x.io'], i >> 2), requester: { email: pick(['r1@x.io', 'r2@x.io'], i) } }));
  rs.push(rec('chat', i, { status: pick(['ai', 'queued', 'assigned', 'closed'], i), agentId: pick(['ag1', 'ag2'], i >> 1), customerEmail: pick(['c1@x.io', 'c2@x.io', 'c3@x.io'], i) }));
  rs.push(rec('customer_activity', i, { email: pick(['c1@x.io', 'c2@x.io'], i), at: at(i), kind: 'page' }));
  const finished = i % 3 !== 0;
  rs.push(rec('task', i, { workflowId: pick(['check-in', 'kitchen'], i >> 3), businessLocationId: pick(['main', 'side'], i), stageId: 'waiting', status: finished ? pick(['completed', 'cancelled'], i >> 1) : 'open', ...(finished ? { finishedAt: at(i) } : {}), assignee: pick(['ann', 'bob'], i) }));
  rs.push(rec('event_participant', i, { event: pick(['ev1', 'ev2'], i), name: `P ${String((i * 31) % 701).padStart(4, '0')}`, status: pick(['invited', 'confirmed'], i >> 1), role: 'attendee' }));
  rs.push(rec('event_session', i, { event: 'ev1', title: `S${i}`, startTime: at(i) }));
  rs.push(rec('event_media', i, { event: pick(['ev1', 'ev2'], i), title: `M${i}`, kind: pick(['image', 'video'], i) }));
  rs.push(rec('note', i, { subjectId: pick(['lead-1', 'lead-2'], i), subjectType: pick(['lead', 'customer'], i >> 1), text: `N${i}` }));
  rs.push(rec('passcode_card', i, { cardUid: `uid-${i}`, status: pick(['active', 'blocked'], i), employeeId: pick(['e1', 'e2', 'e3'], i >> 1) }));
  rs.push(rec('apikey', i, { name: `K${i}`, keyHash: `h${i}` }));
  rs.push(rec('reservation_definition', i, { name: `D ${String((i * 37) % 1009).padStart(4, '0')}`, businessLocationId: 'main' }));
  rs.push(rec('service_point', i, { name: `SP ${String((i * 53) % 1013).padStart(4, '0')}`, businessLocationId: pick(['main', 'side'], i), status: 'free' }));
  rs.push(rec('event', i, { name: `E${i}`, status: pick(['draft', 'published'], i), startDate: at(i), slug: `e-${i}` }));
  rs.push(rec('event_session', 1500 + i, { event: 'ev2', title: `T${i}`, track: pick(['main', 'side'], i), startTime: at(i) }));
}
for (let i = 0; i < rs.length; i += 2000) {
  const b = new WriteBatch();
  for (const r of rs.slice(i, i + 2000)) b.putRecord(r);
  await store.commit(b);
}

interface Case {
  name: string;
  datatype: string;
  filter: Filter;
  sort: string;
  desc?: boolean;
}

const cases: Case[] = [
  { name: 'leads of an owner', datatype: 'lead', filter: { 'data.owner': 'ann@x.io' }, sort: 'createdate', desc: true },
  { name: 'leads of an owner and a status', datatype: 'lead', filter: { 'data.owner': 'bob@x.io', 'data.status': 'won' }, sort: 'createdate', desc: true },
  { name: 'support tickets', datatype: 'support_ticket', filter: {}, sort: 'createdate', desc: true },
  { name: 'support tickets of a status', datatype: 'support_ticket', filter: { 'data.status': 'pending' }, sort: 'createdate', desc: true },
  { name: 'support tickets of an assignee', datatype: 'support_ticket', filter: { 'data.assignee': 'cy@x.io' }, sort: 'createdate', desc: true },
  { name: 'support tickets of a requester', datatype: 'support_ticket', filter: { 'data.requester.email': 'r2@x.io' }, sort: 'createdate', desc: true },
  { name: 'support tickets of an assignee and a priority (narrowed)', datatype: 'support_ticket', filter: { 'data.assignee': 'ann@x.io', 'data.priority': 'high' }, sort: 'createdate', desc: true },
  { name: 'chats', datatype: 'chat', filter: {}, sort: 'createdate', desc: true },
  { name: 'chats of a status', datatype: 'chat', filter: { 'data.status': 'queued' }, sort: 'createdate', desc: true },
  { name: 'chats of an agent', datatype: 'chat', filter: { 'data.agentId': 'ag2' }, sort: 'createdate', desc: true },
  { name: 'chats of a customer', datatype: 'chat', filter: { 'data.customerEmail': 'c3@x.io' }, sort: 'createdate', desc: true },
  { name: "a person's activity", datatype: 'customer_activity', filter: { 'data.email': 'c1@x.io' }, sort: 'data.at', desc: true },
  { name: 'tasks of a status', datatype: 'task', filter: { 'data.status': 'open' }, sort: 'createdate' },
  { name: 'tasks of a status and an assignee (narrowed)', datatype: 'task', filter: { 'data.status': 'open', 'data.assignee': 'bob', 'data.workflowId': 'kitchen' }, sort: 'createdate' },
  { name: 'finished check-in tasks', datatype: 'task', filter: { 'data.workflowId': 'check-in', 'data.status': { $in: ['completed', 'cancelled'] } }, sort: 'data.finishedAt', desc: true },
  { name: 'finished check-in tasks of a location', datatype: 'task', filter: { 'data.workflowId': 'check-in', 'data.status': { $in: ['completed', 'cancelled'] }, 'data.businessLocationId': 'side' }, sort: 'data.finishedAt', desc: true },
  { name: "an event's participants", datatype: 'event_participant', filter: { 'data.event': 'ev1' }, sort: 'data.name' },
  { name: "an event's confirmed participants", datatype: 'event_participant', filter: { 'data.event': 'ev2', 'data.status': 'confirmed' }, sort: 'data.name' },
  { name: "an event's sessions", datatype: 'event_session', filter: { 'data.event': 'ev1' }, sort: 'data.startTime' },
  { name: "an event's media", datatype: 'event_media', filter: { 'data.event': 'ev2' }, sort: 'createdate' },
  { name: "an event's sessions of a track", datatype: 'event_session', filter: { 'data.event': 'ev2', 'data.track': 'side' }, sort: 'data.startTime' },
  { name: "an event's participants of a role", datatype: 'event_participant', filter: { 'data.event': 'ev1', 'data.role': 'attendee' }, sort: 'data.name' },
  { name: 'events', datatype: 'event', filter: {}, sort: 'data.startDate' },
  { name: 'published events', datatype: 'event', filter: { 'data.status': 'published' }, sort: 'data.startDate' },
  { name: "a subject's notes", datatype: 'note', filter: { 'data.subjectId': 'lead-1', 'data.subjectType': 'customer' }, sort: 'createdate' },
  { name: 'passcode cards', datatype: 'passcode_card', filter: {}, sort: 'createdate' },
  { name: 'passcode cards of a status', datatype: 'passcode_card', filter: { 'data.status': 'blocked' }, sort: 'createdate' },
  { name: "an employee's passcode cards", datatype: 'passcode_card', filter: { 'data.employeeId': 'e2' }, sort: 'createdate' },
  { name: 'API keys', datatype: 'apikey', filter: {}, sort: 'createdate' },
  { name: 'reservation definitions', datatype: 'reservation_definition', filter: {}, sort: 'data.name' },
  { name: "a location's service points", datatype: 'service_point', filter: { 'data.businessLocationId': 'side' }, sort: 'data.name' },
];

t.test('listing routes - each filter a route builds pages by index by number and by cursor like a full sorted read', async (t) => {
  for (const c of cases) {
    const sortType = c.desc ? 'desc' : 'asc';
    const all = store.scan(org, c.datatype, c.filter);
    sortRecords(all, c.sort, sortType);
    const want = all.map((r) => r.sk);
    t.ok(want.length > 20, `${c.name}: ${want.length} records`);
    const pageSize = 17;
    const byNumber: string[] = [];
    for (let page = 1; page <= Math.ceil(want.length / pageSize); page++) {
      const r = store.find(org, c.datatype, c.filter, { sort: c.sort, sortType, page, pageSize });
      if (r.total !== want.length) t.fail(`${c.name}: total ${r.total} on page ${page}`);
      byNumber.push(...r.data.map((x) => x.sk));
    }
    t.same(byNumber, want, `${c.name}: by number`);
    const byCursor: string[] = [];
    let after: string | undefined;
    do {
      const r = store.find(org, c.datatype, c.filter, { sort: c.sort, sortType, pageSize: 23, ...(after ? { after } : {}) });
      byCursor.push(...r.data.map((x) => x.sk));
      after = r.next;
    } while (after);
    t.same(byCursor, want, `${c.name}: by cursor`);
    const ex = store.explain(org, c.datatype, c.filter, { sort: c.sort, sortType, page: 2, pageSize });
    t.equal(ex.sort?.by, 'index', `${c.name}: read by index`);
    if (!c.name.includes('narrowed')) t.equal(ex.docsExamined, pageSize, `${c.name}: one page of records read`);
  }
});

t.test('listing routes - the routes answer from the listings', async (t) => {
  const viaRoute = async (path: string) => {
    const r = await staff.get(path);
    t.equal(r.status, 200, path);
    return r.body as { total: number; data: StoredRecord[] };
  };
  const tickets = await viaRoute('/crm/tickets/detail?status=pending&pageSize=5&page=3');
  t.same(tickets.data.map((r) => r.sk), store.find(org, 'support_ticket', { 'data.status': 'pending' }, { sort: 'createdate', sortType: 'desc', page: 3, pageSize: 5 }).data.map((r) => r.sk));
  t.equal(tickets.total, 500);
  const leads = await staff.get('/crm/leads/detail?owner=ann@x.io&pageSize=10');
  const next = await staff.get(`/crm/leads/detail?owner=ann@x.io&pageSize=10&after=${encodeURIComponent(leads.body.next)}`);
  t.same([leads.status, next.status, next.body.total], [200, 200, 750], 'leads of an owner take the cursor');
  for (const path of ['/crm/tickets/detail?assignee=cy@x.io', '/chat/sessions?agentId=ag2']) {
    const first = await staff.get(`${path}&pageSize=10`);
    const second = await staff.get(`${path}&pageSize=10&after=${encodeURIComponent(first.body.next)}`);
    const byNumber = await staff.get(`${path}&pageSize=10&page=2`);
    t.same([second.status, second.body.data.map((r: StoredRecord) => r.sk)], [200, byNumber.body.data.map((r: StoredRecord) => r.sk)], `${path}: the cursor's page is page 2`);
  }
  const tasks = await staff.get('/workflow/task?status=open&pageSize=10');
  t.same([tasks.status, tasks.body.total, typeof tasks.body.next], [200, 500, 'string'], 'tasks of a status hand out a cursor');
});
