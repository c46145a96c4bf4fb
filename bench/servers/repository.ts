// The server under test of the `repository` scenario: the real startApp with the records module,
// configured from the environment like production (the harness sets PORT, HOST, DATA_DIR,
// LOG_LEVEL; the scenario sets JWT_SECRET so it can sign a staff token). After start-up it seeds
// the fixture straight into the store in large batches (not through HTTP), and only then answers
// 200 on GET /bench/seeded, which the harness waits for. With REPOSITORY_DECLARED=true it seeds the
// same records again as DECLARED_DATATYPE, which no module indexes (the scenario declares its index).
import { WriteBatch } from '../../core/store/store.js';
import type { Module } from '../../edge/module.js';
import { recordsModule } from '../../edge/modules/records.js';
import { route } from '../../edge/route.js';
import { DATATYPE, DECLARED_DATATYPE, RECORDS, recordOf, TENANT } from '../fixtures/repository-records.js';
import { serve } from './serve.js';

const BATCH = 5000;
let seeded = false;

const readyModule: Module = {
  name: 'bench-ready',
  routes: () => [
    route({
      method: 'GET',
      path: '/bench/seeded',
      auth: 'none',
      tenant: 'none',
      tag: 'Bench',
      summary: 'Answers 200 once the fixture is stored (benchmark only)',
      handler: (ctx) => {
        if (!seeded) ctx.status = 503;
        return { seeded };
      },
    }),
  ],
};

const app = await serve('repository bench server', { modules: [recordsModule, readyModule] });

const started = performance.now();
const store = app.deps.store;
await store.commit(new WriteBatch().putOrg({ orgId: TENANT, displayName: 'Bench', createdate: new Date().toISOString() }));
const datatypes = process.env.REPOSITORY_DECLARED === 'true' ? [DATATYPE, DECLARED_DATATYPE] : [DATATYPE];
for (const datatype of datatypes) {
  for (let from = 0; from < RECORDS; from += BATCH) {
    const batch = new WriteBatch();
    for (let i = from; i < Math.min(RECORDS, from + BATCH); i++) batch.putRecord(recordOf(i, datatype));
    await store.commit(batch);
  }
}
seeded = true;
process.stdout.write(`seeded ${RECORDS} records of ${datatypes.join(' and ')} in ${Math.round(performance.now() - started)} ms\n`);
