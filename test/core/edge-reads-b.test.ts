// The edge of reservations, storefront, events and check-in reads no store, and these areas write
// only through their actors, checked on the sources (as test/core/layers.test.ts checks the house): a route validates, makes
// one call into its area's API and serializes (DESIGN.md, The flow of one request). What builds
// the node (edge/app.ts, the metrics gauges) keeps its store handle and is not checked here.
import t from 'tap';
import { source, sources } from '../helpers/sources.js';

const CLEANED = [
  'edge/routes/reservations',
  'edge/routes/storefront',
  'edge/routes/events',
  'edge/routes/checkin',
  'edge/modules/reservations.ts',
  'edge/modules/storefront.ts',
  'edge/modules/events.ts',
  'edge/modules/checkin.ts',
].flatMap(sources);

/** A read of the store: `store.getRecord(`, `deps.store.scan(`, `store.listOrgs(`, ... */
const STORE_READ = /\bstore\.(get|scan|list|read|query|count|has|find|usages)[A-Za-z]*\(/;
/** The store handed to an area function that is not its API constructor (`findLocation(ctx.deps.store, ...)`). */
const STORE_HANDED = /\bdeps\.store\b/;

function offending(pattern: RegExp): string[] {
  const out: string[] = [];
  for (const f of CLEANED) {
    source(f)
      .split('\n')
      .forEach((line, i) => {
        if (pattern.test(line)) out.push(`${f}:${i + 1}: ${line.trim()}`);
      });
  }
  return out;
}

t.test('edge reads (areas B) - no route or module of these areas reads the store', async (t) => {
  // Guards the check itself: a wrong path would make it pass on nothing.
  t.ok(CLEANED.length >= 20 && CLEANED.includes('edge/routes/storefront/receipts.ts'), `${CLEANED.length} files checked`);
  t.same(offending(STORE_READ), [], 'no store.get*/scan/list*/find* call');
  t.same(offending(STORE_HANDED), [], 'no deps.store handed on');
});

t.test('writes (areas B) - every write of these areas goes through the actor that owns it', async (t) => {
  const areas = ['reservations', 'storefront', 'events', 'checkin-queue', 'event-records', 'service-points'].flatMap((a) => sources(`actors/${a}`));
  // An actor's handler queues its writes in ctx.batch; only the runtime commits them.
  const commits = areas.filter((f) => /\.commit\(/.test(source(f)));
  t.same(commits, [], 'no .commit( in actors/{reservations,storefront,events,checkin-queue,event-records,service-points}');
});
