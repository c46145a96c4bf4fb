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

/** Adds the result record to the batch that carries the effect. */
export function recordIdempotent(
  batch: WriteBatch,
  tenant: string,
  key: string,
  print: string,
  result: IdempotentResult,
  clock: Clock,
): void {
  const value: Stored = { fingerprint: print, status: result.status, body: result.body, expiresAt: clock.now() + IDEMPOTENCY_TTL_MS };
  batch.putKv(tenant, IDEMPOTENCY_NS, key, value);
}

/** Deletes expired records of a tenant; returns how many. */
export function expiredIdempotencyKeys(store: Store, tenant: string, clock: Clock): string[] {
  const now = clock.now();
  return store
    .listKv<Stored>(tenant, IDEMPOTENCY_NS)
    .filter((e) => e.value.expiresAt <= now)
    .map((e) => e.key);
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
