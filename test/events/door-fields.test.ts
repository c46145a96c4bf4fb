// A ticket with its door fields (withDoor) is built by copying and then setting fields, not by a
// spread with extras (much slower in V8): the answer must be the same object, key for key and in
// the same order, as the spread gave, and an own `__proto__` key must stay a plain key.
import t from 'tap';
import { foldPatch, withDoor } from '../../actors/scanner/door-fields.js';
import type { ScanEntry } from '../../actors/scanner/scan-entry.js';
import type { StoredRecord } from '../../core/store/record.js';

const at = Date.UTC(2026, 0, 2, 18, 30);
const entry = (kind: 'in' | 'out', first: boolean, ms = at): ScanEntry => ({
  at: ms, kind, ok: true, reason: null, ticketId: 't1', zone: 'main', from: null, checkpoint: null, nonce: null, first, by: 'u1', device: null, receivedAt: null, code: null,
});
const ticket = (data: Record<string, unknown>, state = 'valid'): StoredRecord => ({
  pk: 'acme', sk: 't1', datatype: 'ticket', version: 3, state, createdate: 'c', modifydate: 'm', data,
});

/** The construction withDoor replaced, as the reference. */
function spreadWithDoor(tk: StoredRecord, p: ReturnType<typeof foldPatch>): StoredRecord {
  const d = tk.data;
  const data: Record<string, unknown> = { ...d, inside: p.inside, zone: p.zone };
  const live = d.status === undefined || d.status === 'valid' || d.status === 'checked_in';
  if (p.entered && live) data.status = 'checked_in';
  if (p.checkedInAt !== null && !d.checkedInAt) data.checkedInAt = p.checkedInAt;
  if (p.lastCheckInAt !== null) data.lastCheckInAt = p.lastCheckInAt;
  if (p.lastCheckOutAt !== null) data.lastCheckOutAt = p.lastCheckOutAt;
  const state = p.entered && live && (tk.state === undefined || tk.state === 'valid' || tk.state === 'checked_in') ? 'checked_in' : tk.state;
  return { ...tk, state, data };
}

t.test('withDoor answers what the spread did, key order included', async (t) => {
  const entered = foldPatch(undefined, entry('in', true), 5);
  const left = foldPatch(foldPatch(undefined, entry('in', false), 6), entry('out', false, at + 60_000), 7);
  const tickets = [
    ticket({ event: 'e1', number: 'B1', status: 'valid', holderName: 'A' }),
    ticket({ event: 'e1', number: 'B2', status: 'checked_in', inside: false, zone: null, checkedInAt: 'earlier' }, 'checked_in'),
    ticket({ event: 'e1', number: 'B3', status: 'refunded' }, 'refunded'),
  ];
  for (const tk of tickets) {
    for (const p of [entered, left]) {
      const got = withDoor(tk, p);
      t.equal(JSON.stringify(got), JSON.stringify(spreadWithDoor(tk, p)));
      t.not(got.data, tk.data, 'a copy: the record read is not changed');
    }
  }
  t.equal(withDoor(tickets[0], entered).data.checkedInAt, new Date(at).toISOString());
  t.equal(withDoor(tickets[0], left).data.lastCheckOutAt, new Date(at + 60_000).toISOString(), 'times of different scans are not mixed up');
});

t.test('an own __proto__ key stays data, never the prototype', async (t) => {
  const data = JSON.parse('{"event":"e1","__proto__":{"polluted":true}}') as Record<string, unknown>;
  const got = withDoor(ticket(data), foldPatch(undefined, entry('in', true), 1));
  t.equal(Object.getPrototypeOf(got.data), Object.prototype);
  t.equal((got.data as { polluted?: boolean }).polluted, undefined);
  t.ok(Object.hasOwn(got.data, '__proto__'));
});
