// Idempotency keys (spec: Limits → Idempotency). A write that carries `idempotencyKey` (a UUID)
// answers every retry with the same key in the same tenant, for 24 hours, with its first result,
// without repeating its effect; the same key with a different request body is a 409.
//
// The result is recorded in the SAME WriteBatch as the effect, so a crash can never leave an effect
// without its record (which would let a retry repeat it) or a record without its effect. The
// check and the write must be serialized per key: do both inside one actor message (the actor's
// mailbox is the lock), or wrap the call in `IdempotencyGate.run`.
import { createHash } from 'node:crypto';
import type { Clock } from './clock.js';
import { AppError } from './errors.js';
import { isUuid } from './ids.js';
import type { Store, WriteBatch } from './store/store.js';

export const IDEMPOTENCY_NS = 'idempotency';
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;

export interface IdempotentResult<T = unknown> {
  status: number;
  body: T;
}

interface Stored {
  fingerprint: string;
  status: number;
  body: unknown;
  expiresAt: number;
}

/** Stable hash of a request: keys sorted, the key itself left out. */
export function fingerprint(scope: string, request: unknown): string {
  const canon = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(canon);
    if (v && typeof v === 'object') {
      const out: Record<string, unknown> = {};
      for (const k of Object.keys(v).sort()) if (k !== 'idempotencyKey') out[k] = canon((v as Record<string, unknown>)[k]);
      return out;
    }
    return v;
  };
  return createHash('sha256').update(scope).update('\u0000').update(JSON.stringify(canon(request)) ?? '').digest('base64url');
}

/** Throws 400 unless `key` is absent or a UUID. */
export function assertIdempotencyKey(key: unknown): asserts key is string | undefined {
  if (key !== undefined && !isUuid(key)) throw new AppError('ERR_IDEMPOTENCY_KEY');
}

/**
 * The first result for this key, when there is one and it has not expired; throws 409 when the
 * key was used for a different request. `scope` names the operation (e.g. `repository.create`).
 */
export function findIdempotent<T = unknown>(
  store: Store,
  tenant: string,
  key: string,
  print: string,
  clock: Clock,
): IdempotentResult<T> | undefined {
  const hit = store.getKv<Stored>(tenant, IDEMPOTENCY_NS, key);
  if (!hit || hit.expiresAt <= clock.now()) return undefined;
  if (hit.fingerprint !== print) throw new AppError('ERR_IDEMPOTENCY_MISMATCH');
  return { status: hit.status, body: hit.body as T };
}

/**
 * Keys by expiry: `<expiresAt, 15 digits>:<key>` → 1, so expired records are found a page at a
 * time in expiry order, never by reading every record (with their result bodies) of a tenant.
 */
export const IDEMPOTENCY_EXPIRY_NS = 'idempotency_expiry';
/** In IDEMPOTENCY_EXPIRY_NS (sorts after every expiry key): how far records written before that index have been looked at. */
const LEGACY_CURSOR = '~legacy';
const LEGACY_DONE = '~';
/** One write in this many also deletes up to SWEEP_MAX expired records of its tenant, in its own batch. */
const SWEEP_EVERY = 16;
const SWEEP_MAX = 32;
let sinceSweep = 0;

const expiryKey = (expiresAt: number, key: string): string => `${String(Math.max(0, Math.floor(expiresAt))).padStart(15, '0')}:${key}`;

/**
 * Adds the result record to the batch that carries the effect. Every SWEEP_EVERY-th call also
 * deletes a page of the tenant's expired records in that batch: deletion keeps pace with writing
 * at a bounded cost per write, and a tenant's records never outgrow a day of its writes.
 */
export function recordIdempotent(
  store: Store,
  batch: WriteBatch,
  tenant: string,
  key: string,
  print: string,
  result: IdempotentResult,
  clock: Clock,
): void {
  const now = clock.now();
  const value: Stored = { fingerprint: print, status: result.status, body: result.body, expiresAt: now + IDEMPOTENCY_TTL_MS };
  batch.putKv(tenant, IDEMPOTENCY_NS, key, value);
  batch.putKv(tenant, IDEMPOTENCY_EXPIRY_NS, expiryKey(value.expiresAt, key), 1);
  if (++sinceSweep >= SWEEP_EVERY) {
    sinceSweep = 0;
    sweepIdempotency(store, batch, tenant, now, SWEEP_MAX);
  }
}

/**
 * Deletes in `batch` up to `max` of the tenant's records expired at `now`, found on the expiry
 * index, then looks at up to `max` records written before that index existed (a cursor, once).
 * Answers how many records it deletes.
 */
export function sweepIdempotency(store: Store, batch: WriteBatch, tenant: string, now: number, max: number): number {
  const gone = new Set<string>();
  for (const { key: ek } of store.rangeKv(tenant, IDEMPOTENCY_EXPIRY_NS, { until: expiryKey(now + 1, ''), limit: max })) {
    batch.deleteKv(tenant, IDEMPOTENCY_EXPIRY_NS, ek);
    const key = ek.slice(ek.indexOf(':') + 1);
    // The same key recorded again since (after its expiry) has a later expiry key of its own.
    const rec = store.getKv<Stored>(tenant, IDEMPOTENCY_NS, key);
    if (rec && rec.expiresAt <= now) {
      batch.deleteKv(tenant, IDEMPOTENCY_NS, key);
      gone.add(key);
    }
  }
  const cursor = store.getKv<string>(tenant, IDEMPOTENCY_EXPIRY_NS, LEGACY_CURSOR);
  if (cursor === LEGACY_DONE) return gone.size;
  const page = store.rangeKv<Stored>(tenant, IDEMPOTENCY_NS, { after: cursor, limit: max });
  for (const { key, value } of page) {
    if (gone.has(key)) continue;
    if (value.expiresAt <= now) {
      batch.deleteKv(tenant, IDEMPOTENCY_NS, key);
      gone.add(key);
    } else batch.putKv(tenant, IDEMPOTENCY_EXPIRY_NS, expiryKey(value.expiresAt, key), 1);
  }
  batch.putKv(tenant, IDEMPOTENCY_EXPIRY_NS, LEGACY_CURSOR, page.length < max ? LEGACY_DONE : page[page.length - 1].key);
  return gone.size;
}

/**
 * Serializes calls that share a key within this process, so concurrent retries of one request
 * wait for the first instead of racing it. (A tenant is served by one node at a time.)
 */
export class IdempotencyGate {
  private readonly running = new Map<string, Promise<unknown>>();

  async run<T>(key: string, fn: () => Promise<T>): Promise<T> {
    for (;;) {
      const busy = this.running.get(key);
      if (!busy) break;
      await busy.catch(() => undefined);
    }
    const p = fn();
    this.running.set(key, p);
    try {
      return await p;
    } finally {
      if (this.running.get(key) === p) this.running.delete(key);
    }
  }
}
