// The door's writes against the store alone: no HTTP, no validation, no actor. 50 writers (as 50
// gates, each waiting for its commit before the next scan) commit, on the scan bench's 100,000-ticket
// store, in the same run:
//
//   log entry only          what a denied scan commits: one scan log entry
//   ticket + log entry      what a first entry commits: the ticket rewritten (status checked_in,
//                           version-checked) and its scan log entry, built as the scanner builds them
//   the same, after import  the same on a store seeded in 5,000-ticket transactions, as a bulk import
//                           in requests of that size leaves it: with a large LMDB free list
//   the same, compacted     that store after `npm run compact` (core/store/compact.ts)
//   ticket written behind   on the compacted store: each scan commits its log entry alone, and a
//                           background loop writes the ticket rewrites in batches of up to 1,000
//                           (sorted by id) as fast as it can; how many it wrote, and how many were
//                           still queued at the end, say what a write-behind door would sustain
//
// It is the ceiling of the scan bench's service side on this machine: the service adds the edge,
// validation, auth and the actor on top of it. Knobs: BENCH_SECONDS per case (10), SCAN_TICKETS
// (100000), BENCH_CONNECTIONS writers (50).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { scanEntry } from '../../actors/scanner/scanner-actor.js';
import { LmdbStore } from '../../core/store/lmdb-store.js';
import { nextVersion, type StoredRecord } from '../../core/store/record.js';
import { WriteBatch } from '../../core/store/store.js';
import { EVENT_ID, ORG, seedScanStore, ticketId, ticketNumber, ZONE } from '../fixtures/scan-dataset.js';
import { writeResult } from '../harness.js';
import { envInt, type Scenario } from '../scenario.js';

const NAME = 'scan-store';
const DESCRIPTION = "the door's LMDB writes alone (50 writers): scan log entry vs ticket rewrite + entry, fresh store vs after a bulk import";

interface Case {
  key: 'logOnly' | 'ticketAndLog' | 'ticketAndLogAfterImport' | 'ticketAndLogCompacted' | 'ticketBehind';
  label: string;
  ticketsPerTxn: number;
  compact: boolean;
  /** With the log entry, in the background, or not at all (a denial's write). */
  ticket: 'inline' | 'behind' | 'none';
}

const CASES: Case[] = [
  { key: 'logOnly', label: 'log entry only', ticketsPerTxn: 200_000, compact: false, ticket: 'none' },
  { key: 'ticketAndLog', label: 'ticket + log entry', ticketsPerTxn: 200_000, compact: false, ticket: 'inline' },
  { key: 'ticketAndLogAfterImport', label: 'ticket + log entry, after import', ticketsPerTxn: 5_000, compact: false, ticket: 'inline' },
  { key: 'ticketAndLogCompacted', label: 'the same, compacted', ticketsPerTxn: 5_000, compact: true, ticket: 'inline' },
  { key: 'ticketBehind', label: 'ticket written behind, compacted', ticketsPerTxn: 5_000, compact: true, ticket: 'behind' },
];

const BEHIND_BATCH = 1_000;

interface Measured {
  commitsPerSec: number;
  cpuMicrosPerCommit: number;
  latencyP50Ms: number;
  latencyP99Ms: number;
  /** Written behind: ticket rewrites per second, and those still queued when the writers stopped. */
  behindPerSec?: number;
  behindQueued?: number;
}

const fmt = (n: number, digits = 0) => n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });

async function measure(c: Case, tickets: number, seconds: number, writers: number): Promise<Measured> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-scan-store-'));
  try {
    await seedScanStore(dir, tickets, { ticketsPerTxn: c.ticketsPerTxn, compact: c.compact });
    const store = new LmdbStore({ path: dir, mapSizeGiB: 16 });
    const log = `scan:${EVENT_ID}`;
    let seq = 0;
    let next = 0;
    const latencies: number[] = [];
    const end = performance.now() + seconds * 1000;
    const queued: StoredRecord[] = [];
    let behind = 0;
    const writeBehind = async () => {
      while (performance.now() < end) {
        if (queued.length === 0) {
          await new Promise((r) => setTimeout(r, 1));
          continue;
        }
        const recs = queued.splice(0, BEHIND_BATCH).sort((a, b) => (a.sk < b.sk ? -1 : 1));
        const b = new WriteBatch();
        // The loop is the tickets' only writer here; past one pass over them a ticket can be queued
        // twice from the same stored version, so no version is checked.
        for (const r of recs) b.putRecord(r);
        await store.commit(b);
        behind += recs.length;
      }
    };
    const writer = async () => {
      while (performance.now() < end) {
        // Tickets in a scattered order (arrivals are not in id order); every ticket once per pass.
        const i = (next++ * 7919) % tickets;
        const now = Date.now();
        const e = scanEntry('in', { code: ticketNumber(i), zone: ZONE }, 'bench-staff', now);
        const b = new WriteBatch();
        if (c.ticket !== 'none') {
          const t = store.getRecord(ORG, 'ticket', ticketId(i))!;
          const when = new Date(now).toISOString();
          e.ok = true;
          e.ticketId = t.sk;
          e.first = true;
          const data = { ...t.data, status: 'checked_in', inside: true, zone: ZONE, checkedInAt: when, lastCheckInAt: when };
          const rec = nextVersion(t, { state: 'checked_in', data }, now);
          if (c.ticket === 'inline') b.putRecord(rec, t.version);
          else queued.push(rec);
        } else {
          e.reason = 'invalid_code';
          e.code = ticketNumber(i).toLowerCase() + 'x';
        }
        b.append(ORG, log, ++seq, e);
        const t0 = performance.now();
        await store.commit(b);
        latencies.push(performance.now() - t0);
      }
    };
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    await Promise.all([...Array.from({ length: writers }, writer), ...(c.ticket === 'behind' ? [writeBehind()] : [])]);
    const elapsed = (performance.now() - t0) / 1000;
    const cpu = process.cpuUsage(cpu0);
    await store.close();
    latencies.sort((a, b) => a - b);
    const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0;
    return {
      commitsPerSec: latencies.length / elapsed,
      cpuMicrosPerCommit: (cpu.user + cpu.system) / Math.max(1, latencies.length),
      latencyP50Ms: at(0.5),
      latencyP99Ms: at(0.99),
      ...(c.ticket === 'behind' ? { behindPerSec: behind / elapsed, behindQueued: queued.length } : {}),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export const scanStore: Scenario = {
  name: NAME,
  description: DESCRIPTION,
  async run() {
    const seconds = envInt('BENCH_SECONDS', 10);
    const tickets = envInt('SCAN_TICKETS', 100_000);
    const writers = envInt('BENCH_CONNECTIONS', 50);
    const results: Record<string, Measured> = {};
    for (const c of CASES) {
      console.log(`  ${c.label} (${seconds} s, ${writers} writers, ${fmt(tickets)} tickets)`);
      results[c.key] = await measure(c, tickets, seconds, writers);
    }
    console.log('');
    console.log(`${'case'.padEnd(34)}${'commits/s'.padStart(11)}${'cpu µs/commit'.padStart(15)}${'p50 ms'.padStart(9)}${'p99 ms'.padStart(9)}`);
    for (const c of CASES) {
      const r = results[c.key];
      console.log(
        `${c.label.padEnd(34)}${fmt(r.commitsPerSec).padStart(11)}${fmt(r.cpuMicrosPerCommit, 1).padStart(15)}` +
          `${fmt(r.latencyP50Ms, 2).padStart(9)}${fmt(r.latencyP99Ms, 2).padStart(9)}`,
      );
    }
    const ratio = (a: number, b: number) => Math.round((a / b) * 100) / 100;
    const ratios = {
      ticketAndLogVsLogOnly: ratio(results.ticketAndLog.commitsPerSec, results.logOnly.commitsPerSec),
      afterImportVsFresh: ratio(results.ticketAndLogAfterImport.commitsPerSec, results.ticketAndLog.commitsPerSec),
      compactedVsFresh: ratio(results.ticketAndLogCompacted.commitsPerSec, results.ticketAndLog.commitsPerSec),
      behindVsInlineCompacted: ratio(results.ticketBehind.commitsPerSec, results.ticketAndLogCompacted.commitsPerSec),
    };
    console.log(
      `\nticket + entry: ${ratios.ticketAndLogVsLogOnly}× the rate of an entry alone; after a bulk import: ` +
        `${ratios.afterImportVsFresh}× the fresh store, ${ratios.compactedVsFresh}× once compacted`,
    );
    const b = results.ticketBehind;
    console.log(
      `written behind: scans acknowledged ${ratios.behindVsInlineCompacted}× as fast as with the ticket inline; the background wrote ` +
        `${fmt(b.behindPerSec ?? 0)} tickets/s and ${fmt(b.behindQueued ?? 0)} were still queued at the end`,
    );
    const file = writeResult(NAME, { tickets, seconds, writers, results, ratios });
    console.log(`wrote ${file}`);
    return results;
  },
};
