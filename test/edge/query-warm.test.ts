// QUERY_WARM_AT_START: by default a node starts its query workers before it says ready; set false,
// it starts them with the first query, and is ready without them.
import t from 'tap';
import type { QueryPool } from '../../core/query/pool.js';
import { startTestApp } from '../helpers/app.js';
import { bearer, signupOrg } from '../helpers/auth.js';
import { request } from '../helpers/http.js';

t.test('query warm-up - by default the workers have started, their modules loaded, before the node answers ready', async (t) => {
  const app = await startTestApp(t, { modules: ['auth', 'records'], config: { query: { workers: 1, spareWorkers: 1 } } });
  const pool = app.deps.queries as QueryPool;
  t.equal(pool.warm, true, 'warm at start');
  t.equal(pool.readyWorkers, 2, 'both workers (one spare) ready');
  t.same((await request(app.url, '/readyz')).body, { status: 'ready' });
});

t.test('query warm-up - set false, no worker starts until the first query, which starts them and answers', async (t) => {
  const app = await startTestApp(t, { modules: ['auth', 'records'], config: { query: { workers: 1, spareWorkers: 0, warmAtStart: false } } });
  const pool = app.deps.queries as QueryPool;
  t.equal(pool.liveWorkers, 0, 'no worker thread at start');
  t.same((await request(app.url, '/readyz')).body, { status: 'ready' }, 'ready without them');

  const s = await signupOrg(app, { email: 'owner@warm.test' });
  const created = await request(app.url, '/repository/create', { method: 'POST', headers: bearer(s), body: { datatype: 'note', data: { n: 1 }, isNew: true, version: 0 } });
  t.equal(created.status, 201, JSON.stringify(created.body));
  t.equal(pool.liveWorkers, 0, 'a write starts none');
  const found = await request(app.url, '/repository/find/note', { method: 'POST', headers: bearer(s), body: { query: { 'data.n': 1 } } });
  t.equal(found.status, 200, JSON.stringify(found.body));
  t.equal(pool.dispatched, 1, 'the find ran in a worker');
  t.equal(pool.liveWorkers, 1, 'which it started');
});
