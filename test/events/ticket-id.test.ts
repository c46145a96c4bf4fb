// A ticket's id is derived from its number, and stored ids depend on that derivation never
// changing: it must stay the first 96 bits of SHA-256 over "ticket-number\0" + the upper-cased
// number, whatever way it is computed.
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import t from 'tap';
import { ticketIdFor } from '../../actors/event-records/records.js';

const reference = (n: string) => createHash('sha256').update('ticket-number\u0000').update(n.toUpperCase()).digest('hex').slice(0, 24);

t.test('ticketIdFor - the stored derivation, case-blind, 24 hex characters', async (t) => {
  t.equal(ticketIdFor('abcd-1234'), reference('ABCD-1234'));
  t.equal(ticketIdFor('abcd-1234'), ticketIdFor('ABCD-1234'), 'case-blind');
  t.match(ticketIdFor('x'), /^[0-9a-f]{24}$/);
  fc.assert(
    fc.property(fc.string({ maxLength: 40 }), (n) => ticketIdFor(n) === reference(n)),
    { numRuns: 500, seed: 5 },
  );
});
