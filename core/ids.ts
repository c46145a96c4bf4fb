// Record ids: 24 hexadecimal characters (spec: /client-data/reservations/:id), ordered by creation
// time like a MongoDB ObjectId: 4 bytes of seconds, then 8 bytes that are random (issue 28: ids
// must not be guessable from one another, as a per-process part and a counter made them).
//
// Within one second a process's ids still grow in the order they are made: listings break ties of
// equal instants by id (actors/crm/customer-activity-actor.ts byNewest, core/store/query.ts, the
// workflow record view), and key order is creation order in the store. So the first id of a second
// takes 64 fresh random bits, and each later id of the same second adds a random step of 1 to 2^32
// to the previous one (RFC 9562 section 6.2, "monotonic random"): a caller who saw one id must
// still guess 32 bits to name the next, and one who saw none, 64. Past the top of the 64 bits (odds
// about 2^-33 an id) the tail starts again from fresh random bits, out of order that once.
import { randomBytes, randomUUID } from 'node:crypto';

const TAIL = 1n << 64n;
let lastSeconds = -1;
let lastTail = 0n;

/** Random bits in a pool, refilled in blocks: one randomBytes call per 512 ids, not per id. */
const pool = Buffer.alloc(4096);
let poolAt = pool.length;
function random64(): bigint {
  if (poolAt + 8 > pool.length) {
    randomBytes(pool.length).copy(pool);
    poolAt = 0;
  }
  const v = pool.readBigUInt64BE(poolAt);
  poolAt += 8;
  return v;
}

export function newId(nowMs: number = Date.now()): string {
  const seconds = Math.floor(nowMs / 1000) >>> 0;
  let tail: bigint;
  if (seconds === lastSeconds) {
    tail = lastTail + (random64() & 0xffffffffn) + 1n;
    if (tail >= TAIL) tail = random64();
  } else {
    tail = random64();
  }
  lastSeconds = seconds;
  lastTail = tail;
  return seconds.toString(16).padStart(8, '0') + tail.toString(16).padStart(16, '0');
}

const HEX24 = /^[0-9a-f]{24}$/;
export function isId(value: unknown): value is string {
  return typeof value === 'string' && HEX24.test(value);
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[1-8][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i;
export function isUuid(value: unknown): value is string {
  return typeof value === 'string' && UUID.test(value);
}

export { randomUUID };
