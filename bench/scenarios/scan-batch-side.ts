// The scan bench's `scan-batch` side (issue 32): offline scanners uploading what they decided while
// the network was down. One client sends batches of SCAN_BATCH_SIZE (500) offline scans to
// `POST /events/checkin/batch`, one batch in flight at a time (a device waits for its answer before
// it drops the scans from its queue), on a fresh durable service. Each batch: unique nonces, in
// every 20 scans 18 first admissions, 1 admission of a ticket a batch before already let in (a
// conflict), 1 device denial. Reported: each batch's latency (p50, p95, max) and scans per second
// over the measured batches. Aim: p50 ≤ 100 ms for 500 scans.
import { startServer } from '../harness.js';
import { EVENT_ID, JWT_SECRET, ticketNumber, ZONE } from '../fixtures/scan-dataset.js';

export const SCAN_BATCH_AIM_P50_MS = 100;

export interface ScanBatchRun {
  batchSize: number;
  batches: number;
  latencyP50: number;
  latencyP95: number;
  latencyMax: number;
  scansPerSec: number;
  admitted: number;
  conflicts: number;
  denied: number;
  /** Items answered with an error (a bad item): 0 when the bench is right. */
  itemErrors: number;
  cpuMicrosPerScan: number;
  rssBytes: number;
}

/**
 * The bodies of `count` batches over tickets [from, to): first admissions walk the tickets in
 * order; a conflict re-admits a ticket admitted in the batch before (still inside: a double entry).
 */
export function batchBodies(count: number, size: number, from: number, to: number, tag: string): string[] {
  const bodies: string[] = [];
  let next = from;
  const made = Date.now() - 30 * 60_000;
  let previous: number[] = [];
  for (let b = 0; b < count; b++) {
    const scans: unknown[] = [];
    const admittedHere: number[] = [];
    for (let k = 0; k < size; k++) {
      const slot = k % 20;
      const base = { nonce: `${tag}-${b}-${k}`, scannedAt: new Date(made + b * size + k).toISOString(), offline: true, zone: ZONE, eventId: EVENT_ID };
      if (slot === 19) {
        scans.push({ ...base, code: ticketNumber(next + 1), decision: 'denied', reason: 'invalid_time' });
      } else if (slot === 18 && previous.length > 0) {
        scans.push({ ...base, code: ticketNumber(previous[k % previous.length]), decision: 'admitted' });
      } else {
        const i = next;
        next = next + 1 >= to ? from : next + 1;
        admittedHere.push(i);
        scans.push({ ...base, code: ticketNumber(i), decision: 'admitted' });
      }
    }
    previous = admittedHere;
    bodies.push(JSON.stringify({ scans }));
  }
  return bodies;
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

/** One measured run of the side on a fresh server over a copy of the seeded store `template`. */
export async function measureScanBatch(
  serverScript: string,
  template: string,
  headers: Record<string, string>,
  o: { batches: number; warmup: number; size: number; tickets: number },
): Promise<ScanBatchRun> {
  const server = await startServer({ script: serverScript, env: { SCAN_TEMPLATE_DIR: template, JWT_SECRET } });
  try {
    const url = server.url + '/events/checkin/batch';
    if (new URL(url).hostname !== '127.0.0.1') throw new Error('the bench targets 127.0.0.1 only');
    // Warm-up batches on the last tickets, measured ones from the first: every measured ticket is fresh.
    const warmFrom = Math.max(0, o.tickets - o.warmup * o.size);
    const warm = batchBodies(o.warmup, o.size, warmFrom, o.tickets, 'warm');
    const measured = batchBodies(o.batches, o.size, 0, warmFrom, 'run');
    const send = async (body: string) => {
      const res = await fetch(url, { method: 'POST', headers, body, signal: AbortSignal.timeout(30_000) });
      const text = await res.text();
      if (res.status !== 200) throw new Error(`POST ${url}: ${res.status} ${text.slice(0, 500)}`);
      return text;
    };
    for (const b of warm) await send(b);
    const times: number[] = [];
    let admitted = 0;
    let conflicts = 0;
    let denied = 0;
    let itemErrors = 0;
    const cpu0 = server.cpuSeconds();
    const t0 = performance.now();
    for (const b of measured) {
      const s = performance.now();
      const text = await send(b);
      times.push(performance.now() - s);
      // Counted after the clock stopped for the batch: the client's parse is not the server's time.
      for (const r of (JSON.parse(text) as { results: Array<{ success: boolean; conflict?: true; error?: unknown }> }).results) {
        if (r.error) itemErrors++;
        else if (!r.success) denied++;
        else {
          admitted++;
          if (r.conflict) conflicts++;
        }
      }
    }
    const elapsed = (performance.now() - t0) / 1000;
    const cpu = server.cpuSeconds() - cpu0;
    const sorted = [...times].sort((a, b) => a - b);
    const scans = o.batches * o.size;
    return {
      batchSize: o.size,
      batches: o.batches,
      latencyP50: percentile(sorted, 50),
      latencyP95: percentile(sorted, 95),
      latencyMax: sorted.at(-1) ?? NaN,
      // Over the whole loop, the client's parse included: what one device uploading back to back gets.
      scansPerSec: scans / elapsed,
      admitted,
      conflicts,
      denied,
      itemErrors,
      cpuMicrosPerScan: (cpu * 1e6) / scans,
      rssBytes: server.rssBytes(),
    };
  } finally {
    await server.stop();
  }
}
