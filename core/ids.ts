// Record ids: 24 hexadecimal characters (spec: /client-data/reservations/:id), ordered by creation
// time like a MongoDB ObjectId: 4 bytes of seconds, 5 random bytes fixed per process, 3 counter bytes.
import { randomBytes, randomUUID } from 'node:crypto';

const processPart = randomBytes(5).toString('hex');
let counter = randomBytes(3).readUIntBE(0, 3);

export function newId(nowMs: number = Date.now()): string {
  counter = (counter + 1) & 0xffffff;
  const seconds = Math.floor(nowMs / 1000) >>> 0;
  return seconds.toString(16).padStart(8, '0') + processPart + counter.toString(16).padStart(6, '0');
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
