import t from 'tap';
import { ManualClock } from '../../core/clock.js';
import { AppError } from '../../core/errors.js';
import { LocalOutbox, type OutboxMessage, type OutboxProvider } from '../../core/outbox.js';
import type { WriteBatch } from '../../core/store/store.js';
import { diningDefinition, outbox, seed, sharedApp, T0, venue, type Venue } from './world.js';
import { workflowModule } from '../../edge/modules/workflow.js';

// Subtests that do not restart share one app (a fresh org each); they leave no job pending.
const shared = await sharedApp(t, { modules: ['reservations', 'workflow'] });

const SAT_10 = '2026-03-21T09:00:00.000Z'; // 10:00 Berlin; the reminder is two hours before: 07:00Z
const SAT_12 = '2026-03-21T11:00:00.000Z';

async function eventually<T>(check: () => T | undefined | false, ms = 5000): Promise<T | undefined> {
  const until = Date.now() + ms;
  for (;;) {
    const v = check();
    if (v) return v;
    if (Date.now() > until) return undefined;
    await new Promise((r) => setTimeout(r, 20));
  }
}

function reminders(v: Venue) {
  return outbox(v.app, v.org).filter((m) => m.kind === 'reservation-reminder');
}

async function book(v: Venue, defId: string, startTime: string) {
  const res = await v.alice.post('/crm/reservations/create', { reservationDefinitionId: defId, service: 'Table', startTime, phone: '1' });
  return res.body;
}

t.test('reminder - sent once when due, in the same write that stamps the booking', async (t) => {
  const v = await venue(t, { shared });
  const def = await seed(v.app, v.org, 'reservation_definition', diningDefinition());
  const b = await book(v, def.sk, SAT_10);
  const s = v.app.deps.services.scheduler;
  v.clock.set(Date.UTC(2026, 2, 21, 6, 59));
  t.equal(await s.runDue(), 0, 'a minute early');
  t.equal(reminders(v).length, 0);
  v.clock.advance(60_000);
  t.equal(await s.runDue(), 1);
  const sent = reminders(v);
  t.equal(sent.length, 1);
  t.match(sent[0], { to: 'alice@example.com', channel: 'email', payload: { reservationId: b.sk } });
  t.match(sent[0].body, 'on 2026-03-21 at 10:00 (Europe/Berlin)');
  const rec = v.app.deps.store.getRecord(v.org, 'reservation', b.sk)!;
  t.same([rec.data.reminderSentAt, rec.data.reminderJobId], ['2026-03-21T07:00:00.000Z', null]);
  v.clock.advance(3_600_000);
  t.equal(await s.runDue(), 0);
  t.equal(reminders(v).length, 1, 'once');
});

t.test('reminder - fires after a restart on a clock past its due time, and only once', async (t) => {
  const clock = new ManualClock(T0);
  const first = await venue(t, { modules: ['reservations', 'workflow'], clock });
  const def = await seed(first.app, first.org, 'reservation_definition', diningDefinition());
  const b = await book(first, def.sk, SAT_10);
  t.equal(reminders(first).length, 0);
  await first.app.close();

  clock.set(Date.UTC(2026, 2, 21, 7, 30));
  const second = await venue(t, { modules: ['reservations', 'workflow'], clock, dataDir: first.dataDir });
  const sent = await eventually(() => (reminders(second).length > 0 ? reminders(second) : undefined));
  t.ok(sent, 'the reminder went out without anyone asking');
  t.equal(sent?.length, 1);
  t.equal(sent?.[0].payload?.reservationId, b.sk);
  t.equal(second.app.deps.store.getRecord(second.org, 'reservation', b.sk)!.data.reminderSentAt, '2026-03-21T07:30:00.000Z');
  t.same(second.app.deps.store.listKv(second.org, 'scheduler'), []);
  await second.app.close();

  const third = await venue(t, { modules: ['reservations', 'workflow'], clock, dataDir: first.dataDir });
  t.equal(await third.app.deps.services.scheduler.runDue(), 0);
  t.equal(reminders(third).length, 1, 'a second restart sends nothing more');
});

t.test('reminder - a cancelled booking and a rescheduled one get no stale reminder', async (t) => {
  const clock = new ManualClock(T0);
  const first = await venue(t, { modules: ['reservations', 'workflow'], clock });
  const def = await seed(first.app, first.org, 'reservation_definition', diningDefinition());
  const gone = await book(first, def.sk, SAT_10);
  const moved = await book(first, def.sk, SAT_10);
  await first.alice.post('/crm/reservations/update', { id: gone.sk, status: 'cancelled' });
  await first.alice.post('/crm/reservations/update', { id: moved.sk, startTime: SAT_12 });
  await first.app.close();

  clock.set(Date.UTC(2026, 2, 21, 7, 30)); // past the old 07:00Z reminder, before the new 09:00Z one
  const second = await venue(t, { modules: ['reservations', 'workflow'], clock, dataDir: first.dataDir });
  const s = second.app.deps.services.scheduler;
  await s.runDue();
  t.equal(reminders(second).length, 0, 'nothing for the cancelled or the moved booking yet');
  clock.set(Date.UTC(2026, 2, 21, 9, 0));
  t.equal(await s.runDue(), 1);
  const sent = reminders(second);
  t.same(sent.map((m) => m.payload?.reservationId), [moved.sk]);
  t.match(sent[0].body, 'at 12:00');
});

t.test('reminder - none when booked inside the reminder window, none when switched off', async (t) => {
  const v = await venue(t, { shared });
  const off = await seed(v.app, v.org, 'reservation_definition', diningDefinition({ reminder: { enabled: false }, confirmation: false }));
  const on = await seed(v.app, v.org, 'reservation_definition', diningDefinition());
  const soon = await book(v, on.sk, '2026-03-20T09:00:00Z'); // in one hour; the reminder would be due an hour ago
  t.equal(soon.data.reminderJobId, undefined);
  const quiet = await book(v, off.sk, SAT_10);
  t.equal(quiet.data.reminderJobId, undefined);
  t.equal(quiet.data.confirmationSentAt, undefined, 'confirmations switched off');
  t.same(v.app.deps.services.scheduler.pending(v.org), []);
  t.same(outbox(v.app, v.org).map((m) => m.kind), ['reservation-confirmation'], 'only the first definition confirms');
});

t.test('messages - a failing provider never loses a booking or its messages: the dispatcher retries them', async (t) => {
  let down = true;
  const tried: string[] = [];
  let local: LocalOutbox | undefined;
  // Like a real provider: messages are queued with the write, delivered later, and delivery can fail.
  const flaky: OutboxProvider = {
    name: 'flaky',
    send: (tenant: string, msg: OutboxMessage, batch?: WriteBatch) => local!.send(tenant, msg, batch),
    async deliver(_tenant: string, _msg: OutboxMessage, messageId: string) {
      tried.push(messageId);
      if (down) throw new AppError('ERR_UNAVAILABLE', ['mail server down']);
      return { provider: 'flaky' };
    },
  };
  const v = await venue(t, { modules: ['reservations', 'workflow'], outbox: flaky });
  local = new LocalOutbox(v.app.deps.store, v.clock);
  const def = await seed(v.app, v.org, 'reservation_definition', diningDefinition());
  const res = await v.alice.post('/crm/reservations/create', { reservationDefinitionId: def.sk, service: 'Table', startTime: SAT_10, phone: '1' });
  t.equal(res.status, 201, 'booked although the mail server is down');
  t.equal(res.body.data.messageError, undefined, 'the confirmation is queued with the booking, not sent by it');
  t.ok(res.body.data.reminderJobId, 'the reminder is armed');
  const d = v.app.outboxDispatcher;
  await d.drain();
  const [confirmation] = outbox(v.app, v.org);
  t.match(confirmation, { kind: 'reservation-confirmation', state: 'queued', attempts: 1, lastError: /mail server down/ }, 'a failed delivery stays queued');

  const s = v.app.deps.services.scheduler;
  v.clock.set(Date.UTC(2026, 2, 21, 7, 0));
  t.equal(await s.runDue(), 1, 'the reminder job ran: its message is queued whatever the mail server does');
  t.equal(s.pending(v.org).length, 0);
  t.equal(reminders(v).length, 1);
  await d.drain();
  t.same(outbox(v.app, v.org).map((m) => m.state), ['queued', 'queued'], 'both wait for a retry');
  down = false;
  v.clock.advance(10_000);
  await d.drain();
  t.same(outbox(v.app, v.org).map((m) => [m.kind, m.state, m.provider]), [['reservation-confirmation', 'sent', 'flaky'], ['reservation-reminder', 'sent', 'flaky']]);
  // Tried at booking, again once its back-off had passed (07:00, still down), and sent: one id.
  t.equal(tried.filter((id) => id === confirmation.id).length, 3, 'every try of the confirmation carried its message id');
  t.equal(outbox(v.app, v.org)[0].attempts, 3);
});

t.test('reminder - still fires after the workflow module stopped: each node has one scheduler, stopped once by the node', async (t) => {
  const v = await venue(t, { modules: ['reservations', 'workflow'] });
  const def = await seed(v.app, v.org, 'reservation_definition', diningDefinition());
  await book(v, def.sk, SAT_10);
  await workflowModule.stop?.(v.app.deps);
  v.clock.set(Date.UTC(2026, 2, 21, 7, 0));
  t.equal(await v.app.deps.services.scheduler.runDue(), 1);
  t.equal(reminders(v).length, 1);
});
