// Closing the query pool while its workers are still starting (a node stopped right after its
// first query): each worker is let finish opening the store and then closed, never terminated in
// the middle of lmdb-js's native open, which can abort the whole process (seen once in CI:
// "FATAL ERROR: Error::ThrowAsJavaScriptException napi_throw" from open() in a worker).
import t from 'tap';
import { RECORDS_QUERY_JOB } from '../../actors/records/reads.js';
import { QueryPool } from '../../core/query/pool.js';
import { LmdbStore } from '../../core/store/lmdb-store.js';
import { tempDir } from '../helpers/app.js';

t.test('a pool closed while its workers start: they start, then close; none is ended by force', async (t) => {
  const path = tempDir(t);
  const store = new LmdbStore({ path, mapSizeGiB: 1 });
  t.teardown(() => store.close());
  const pool = new QueryPool({
    workers: 2,
    timeoutMs: 2000,
    heapMb: 128,
    queueMax: 10,
    tenantQueueMax: 10,
    init: {
      store: { path, mapSizeGiB: 1, limits: { defaultPageSize: 20, maxPageSize: 200 } },
      limits: { maxRange: 10_000, maxArray: 100_000, maxString: 1_000_000, maxRegexLength: 1_000, maxStageDocuments: 100_000 },
      maxResultBytes: 1 << 20,
    },
  });
  const job = pool.run('acme', RECORDS_QUERY_JOB, { op: 'count', tenant: 'acme', datatype: 'note' });
  job.catch(() => undefined);
  await pool.close();
  await t.rejects(job, { code: 'ERR_UNAVAILABLE' }, 'the queued job is answered: shutting down');
  t.equal(pool.liveWorkers, 0, 'every worker has exited');
  t.equal(pool.forcedAtClose, 0, 'none was terminated');
});
