// How long one tenant's reads can hold the event loop for everyone (issue 17's isolation, over the
// door's write-behind of issue 19). An event of SCAN_TICKETS tickets (100,000) is seeded, every one
// of them scanned with the background materializer paused (DOOR_MATERIALIZE_MS=0), so every record
// is behind the scan log. Then, while a probe asks GET /healthz back to back (another tenant's
// request, in effect) and keeps its worst answer time:
//   1. one listing of the event's checked-in tickets, which first writes every ticket behind
//      (the door's read barrier, in steps of DOOR_MATERIALIZE_BATCH);
//   2. the same listing again, nothing behind: the listing alone.
// Knobs (env): SCAN_TICKETS (100000), DOOR_MATERIALIZE_BATCH (the server's default when unset).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServer, writeResult, type RunningServer } from '../harness.js';
import { envInt, type Scenario } from '../scenario.js';
import { EVENT_ID, JWT_SECRET, ORG, seedScanStore, staffToken, ticketNumber } from '../fixtures/scan-dataset.js';

const NAME = 'door-stall';
const DESCRIPTION = "the worst /healthz answer while one tenant's listing settles and reads an event's tickets";

interface Probed {
  ms: number;
  status: number;
  probes: number;
  worstProbeMs: number;
}

/** Runs `request` while /healthz is asked back to back; answers its time and the probe's worst. */
async function probed(server: RunningServer, request: () => Promise<Response>): Promise<Probed> {
  let done = false;
  let worst = 0;
  let probes = 0;
  const probe = (async () => {
    while (!done) {
      const t = performance.now();
      await (await fetch(server.url + '/healthz', { signal: AbortSignal.timeout(60_000) })).text();
      worst = Math.max(worst, performance.now() - t);
      probes++;
    }
  })();
  await new Promise((r) => setTimeout(r, 200));
  worst = 0;
  const t0 = performance.now();
  const res = await request();
  await res.text();
  const ms = performance.now() - t0;
  done = true;
  await probe;
  return { ms: Math.round(ms), status: res.status, probes, worstProbeMs: Math.round(worst * 10) / 10 };
}

export const doorStall: Scenario = {
  name: NAME,
  description: DESCRIPTION,
  async run() {
    const n = envInt('SCAN_TICKETS', 100_000);
    const batch = process.env.DOOR_MATERIALIZE_BATCH || undefined;
    const template = mkdtempSync(join(tmpdir(), 'bp-door-stall-'));
    try {
      await seedScanStore(template, n);
      const script = fileURLToPath(new URL('../fixtures/scan-server.js', import.meta.url));
      const env: Record<string, string> = { SCAN_TEMPLATE_DIR: template, JWT_SECRET, DOOR_MATERIALIZE_MS: '0' };
      if (batch) env.DOOR_MATERIALIZE_BATCH = batch;
      const server = await startServer({ script, env });
      const headers = { orgid: ORG, authorization: `Bearer ${staffToken(600)}`, 'content-type': 'application/json' };
      try {
        let next = 0;
        await Promise.all(
          Array.from({ length: 32 }, async () => {
            while (next < n) {
              const i = next++;
              const r = await fetch(server.url + '/events/checkin', { method: 'POST', headers, body: JSON.stringify({ code: ticketNumber(i), zone: 'main', eventId: EVENT_ID }) });
              const b = (await r.json()) as { success?: boolean };
              if (!b.success) throw new Error(`scan ${i} was not let in: ${JSON.stringify(b)}`);
            }
          }),
        );
        const list = () => fetch(`${server.url}/events/${EVENT_ID}/tickets?status=checked_in&pageSize=1`, { headers, signal: AbortSignal.timeout(300_000) });
        const settling = await probed(server, list);
        const listing = await probed(server, list);
        console.log(`  ${n.toLocaleString('en')} tickets scanned, every record behind; materialize step ${batch ?? 'default'}`);
        console.log(`  listing that first writes them all: ${settling.ms} ms (status ${settling.status}); /healthz worst ${settling.worstProbeMs} ms over ${settling.probes} probes`);
        console.log(`  the same listing, nothing behind:   ${listing.ms} ms (status ${listing.status}); /healthz worst ${listing.worstProbeMs} ms over ${listing.probes} probes`);
        const result = { scenario: NAME, date: new Date().toISOString(), tickets: n, materializeBatch: batch ?? 'default', settling, listing };
        console.log(`wrote ${writeResult(NAME, result)}`);
        return result;
      } finally {
        await server.stop();
      }
    } finally {
      rmSync(template, { recursive: true, force: true });
    }
  },
};
