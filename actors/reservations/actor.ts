// The reservations actor: one per reservation definition. It books (capacity checked against every
// live booking of the service, its own in-flight ones included), reschedules, cancels, stamps
// check-ins, and sends confirmations and reminders. A booking, its confirmation message and its
// reminder timer are written in one batch: all of them exist, or none. The one keyed
// RESERVATION_SETTINGS_KEY holds no definition: it writes the organisation's reservation settings.
//
// Booking status (spec: "Reservation status values and transitions: not shown", so ours):
//   confirmed ──update {status: 'cancelled'}──▶ cancelled
//   confirmed ──POST /checkin/from-reservation──▶ checked_in
import type { ActorContext, ActorKind } from '../../core/actor/runtime.js';
import { AppError, appError } from '../../core/errors.js';
import { fingerprint, findIdempotent, recordIdempotent } from '../../core/idempotency.js';
import { randomBytes } from 'node:crypto';
import { newRecord, nextVersion, type StoredRecord } from '../../core/store/record.js';
import { cancelJob, completeJob, scheduleJob } from '../../core/scheduler.js';
import { addDays, localDate, localTime, parseInstant } from '../../core/timezone.js';
import { RecordView } from '../../core/store/record-view.js';
import { queueEvent } from '../../core/webhooks/catalogue.js';
import {
  bookingsOf,
  daySlots,
  findDefinition,
  loadDefinition,
  peakLoad,
  resolveService,
  RESERVATION_DATATYPE,
  type Definition,
  type MessageSettings,
  type ServiceDef,
} from './definition.js';
import {
  REMINDER_JOB,
  RESERVATIONS_ACTOR,
  type Owner,
  type ReservationMessage,
  type UpdateReservationInput,
} from './messages.js';
import { updateReservationSettings } from './settings.js';
import type { ReservationSettings } from '../org-settings/index.js';

interface State {
  view: RecordView;
  /** Idempotency results of this activation not yet known to be committed. */
  idem: Map<string, { print: string; body: unknown }>;
  /** Confirmation numbers handed out by this activation. */
  numbers: Set<string>;
  /** The settings this actor last wrote (only the one keyed RESERVATION_SETTINGS_KEY writes them). */
  settings: ReservationSettings | undefined;
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
// No 0/O, 1/I/L: read out over a phone or a counter.
const ALPHABET = 'ABCDEFGHJKMNPQRSTUVWXYZ23456789';

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

/**
 * A confirmation number: `R-` and 8 characters. It can never equal the booking's sk (24 hex) and
 * the `R-` prefix keeps it apart from order and ticket numbers.
 */
function confirmationNumber(state: State, ctx: ActorContext): string {
  for (;;) {
    const bytes = randomBytes(8);
    let s = 'R-';
    for (const b of bytes) s += ALPHABET[b % ALPHABET.length];
    if (state.numbers.has(s)) continue;
    if (ctx.store.count(ctx.tenant, RESERVATION_DATATYPE, { 'data.confirmationNumber': s }) > 0) continue;
    state.numbers.add(s);
    return s;
  }
}

function isEmpty(v: unknown): boolean {
  return v === undefined || v === null || (typeof v === 'string' && v.trim() === '') || (Array.isArray(v) && v.length === 0);
}

function checkRequired(def: Definition, answers: Record<string, unknown>, customer: Record<string, unknown>): void {
  const missing = def.requiredFields.filter((f) => isEmpty(answers[f.name]) && isEmpty(customer[f.name]));
  if (missing.length === 0) return;
  const messages = missing.map((f) => `body/${f.name} is required (${f.label})`);
  throw new AppError('ERR_VALIDATION', [`missing required fields: ${missing.map((f) => f.name).join(', ')}`], { messages });
}

interface Timing {
  start: number;
  end: number;
  partySize: number;
  slotLocalTime: string;
}

/** Validates a booking's time and party against the definition, its slots and its capacity. */
function checkTiming(
  state: State,
  ctx: ActorContext,
  def: Definition,
  service: ServiceDef,
  startRaw: unknown,
  endRaw: unknown,
  partySizeRaw: unknown,
  exceptSk?: string,
): Timing {
  const tz = def.timezone;
  const start = parseInstant(startRaw, tz);
  if (start === undefined) throw appError('ERR_VALIDATION', 'body/startTime must be an ISO 8601 date-time');
  if (start <= ctx.clock.now()) throw appError('ERR_VALIDATION', 'body/startTime is in the past');
  let end = start + service.durationMinutes * 60_000;
  if (endRaw !== undefined && endRaw !== null && endRaw !== '') {
    const e = parseInstant(endRaw, tz);
    if (e === undefined) throw appError('ERR_VALIDATION', 'body/endTime must be an ISO 8601 date-time');
    if (e <= start) throw appError('ERR_VALIDATION', 'body/endTime must be after startTime');
    end = e;
  }
  const partySize = partySizeRaw === undefined || partySizeRaw === null ? 1 : Number(partySizeRaw);
  if (!Number.isInteger(partySize) || partySize < 1) throw appError('ERR_VALIDATION', 'body/partySize must be a positive integer');
  if (def.maxPartySize !== undefined && partySize > def.maxPartySize) {
    throw appError('ERR_VALIDATION', `body/partySize must be at most ${def.maxPartySize}`);
  }
  if (partySize > service.capacity) {
    throw appError('ERR_VALIDATION', `body/partySize ${partySize} exceeds the capacity of ${service.name} (${service.capacity})`);
  }
  let slotLocalTime = localTime(start, tz);
  if (def.openingHours) {
    // The slot may belong to the previous service date when the hours run past midnight.
    const date = localDate(start, tz);
    const slot = [...daySlots(def, service, date), ...daySlots(def, service, addDays(date, -1))].find((s) => s.start === start);
    if (!slot) {
      throw appError(
        'ERR_VALIDATION',
        `body/startTime ${iso(start)} (${date} ${slotLocalTime} ${tz}) is not a slot of ${service.name}; see POST /crm/reservations/slots`,
      );
    }
    slotLocalTime = slot.localTime;
  }
  const records = state.view.scan(RESERVATION_DATATYPE, { 'data.reservationDefinitionId': def.id });
  const load = peakLoad(bookingsOf(records, def, service, exceptSk), start, end);
  if (load + partySize > service.capacity) {
    const left = Math.max(0, service.capacity - load);
    throw appError(
      'ERR_CONFLICT',
      `the ${slotLocalTime} slot of ${service.name} on ${localDate(start, tz)} is full: ${left} place(s) left, party of ${partySize}`,
    );
  }
  return { start, end, partySize, slotLocalTime };
}

function render(template: string, vars: Record<string, string>): string {
  return template.replace(/\{(\w+)\}/g, (m, k: string) => (k in vars ? vars[k] : m));
}

type MessageKind = 'confirmation' | 'reminder' | 'updated' | 'cancelled';

const DEFAULTS: Record<MessageKind, { subject: string; message: string }> = {
  confirmation: {
    subject: 'Booking confirmed: {service} on {date} at {time}',
    message:
      'Hello {name}, your booking for {service} on {date} at {time} ({timezone}) is confirmed. Confirmation number: {confirmationNumber}.',
  },
  reminder: {
    subject: 'Reminder: {service} on {date} at {time}',
    message: 'Hello {name}, this is a reminder of your booking for {service} on {date} at {time} ({timezone}). Confirmation number: {confirmationNumber}.',
  },
  updated: {
    subject: 'Booking changed: {service} on {date} at {time}',
    message: 'Hello {name}, your booking is now for {service} on {date} at {time} ({timezone}). Confirmation number: {confirmationNumber}.',
  },
  cancelled: {
    subject: 'Booking cancelled: {service} on {date}',
    message: 'Hello {name}, your booking for {service} on {date} at {time} ({timezone}) is cancelled. Confirmation number: {confirmationNumber}.',
  },
};

/**
 * Queues a message about `rec` in the outbox, in `ctx.batch`. Returns where it went, or undefined
 * when the booking has no address for the channel (nothing is sent).
 */
async function sendMessage(
  ctx: ActorContext,
  def: Definition,
  rec: StoredRecord,
  kind: MessageKind,
  settings: MessageSettings,
): Promise<{ channel: 'email' | 'sms'; to: string; id: string } | undefined> {
  const d = rec.data;
  const customer = (d.customer ?? {}) as Record<string, unknown>;
  const answers = (d.answers ?? {}) as Record<string, unknown>;
  const phone = [customer.phone, answers.phone].find((x) => typeof x === 'string' && x) as string | undefined;
  const email = typeof customer.email === 'string' && customer.email ? customer.email : undefined;
  const channel: 'email' | 'sms' = settings.channel === 'sms' && phone ? 'sms' : 'email';
  const to = channel === 'sms' ? phone : email;
  if (!to) return undefined;
  const start = parseInstant(d.startTime, def.timezone) ?? ctx.clock.now();
  const vars: Record<string, string> = {
    name: typeof customer.name === 'string' && customer.name ? customer.name : 'there',
    service: String(d.service ?? def.name),
    definition: def.name,
    date: localDate(start, def.timezone),
    time: localTime(start, def.timezone),
    timezone: def.timezone,
    confirmationNumber: String(d.confirmationNumber ?? ''),
    partySize: String(d.partySize ?? 1),
  };
  const custom = kind === 'confirmation' || kind === 'reminder' ? settings : undefined;
  const entry = await ctx.services.outbox.send(
    ctx.tenant,
    {
      channel,
      to,
      subject: channel === 'email' ? render(custom?.subject ?? DEFAULTS[kind].subject, vars) : undefined,
      body: render(custom?.message ?? DEFAULTS[kind].message, vars),
      kind: `reservation-${kind}`,
      payload: { reservationId: rec.sk, confirmationNumber: vars.confirmationNumber, startTime: iso(start) },
    },
    ctx.batch,
  );
  return { channel, to, id: entry.id };
}

/**
 * A courtesy message (confirmation, change, cancellation): queued with the booking (core/outbox.ts),
 * so a mail server that is down delays it (the dispatcher retries) but never fails the booking.
 * A message that cannot even be queued is noted on the booking (`messageError`); for reminders and
 * explicit sends that fails the request, so the timer retries and the caller hears of it.
 */
async function courtesy(
  ctx: ActorContext,
  def: Definition,
  rec: StoredRecord,
  kind: MessageKind,
): Promise<boolean> {
  try {
    const sent = await sendMessage(ctx, def, rec, kind, def.confirmation);
    delete rec.data.messageError;
    return sent !== undefined;
  } catch (err) {
    rec.data.messageError = `${kind} message not sent: ${(err as Error).message}`;
    return false;
  }
}

/** Arms the reminder of a booking starting at `start`; null when reminders are off or already due. */
function armReminder(ctx: ActorContext, def: Definition, sk: string, start: number): { id: string; dueAt: string } | null {
  if (!def.reminder.enabled) return null;
  const due = start - def.reminder.minutesBefore * 60_000;
  // A booking made inside its reminder window gets no reminder: its confirmation just went out.
  if (due <= ctx.clock.now()) return null;
  const job = scheduleJob(ctx, REMINDER_JOB, due, { reservationId: sk, reservationDefinitionId: def.id, startTime: iso(start) });
  return { id: job.id, dueAt: iso(due) };
}

function ownBooking(state: State, def: Definition, id: string, owner: Owner): StoredRecord {
  const rec = typeof id === 'string' && id ? state.view.get(RESERVATION_DATATYPE, id) : undefined;
  // Another customer's booking is a 404, not a 403 (spec: Errors, 404).
  if (!rec || rec.data.reservationDefinitionId !== def.id || rec.data.customerId !== owner.customerId) {
    throw appError('ERR_NOT_FOUND', `reservation ${id}`);
  }
  return rec;
}

function cleanCustomer(raw: unknown, fallbackEmail?: string): Record<string, string> {
  const c = raw && typeof raw === 'object' ? (raw as Record<string, unknown>) : {};
  const out: Record<string, string> = {};
  for (const k of ['name', 'email', 'phone'] as const) {
    if (typeof c[k] === 'string' && (c[k] as string).trim()) out[k] = (c[k] as string).trim().slice(0, 200);
  }
  if (!out.email && fallbackEmail) out.email = fallbackEmail;
  if (out.email && !EMAIL.test(out.email)) throw appError('ERR_VALIDATION', 'body/customer/email must be an email address');
  return out;
}

async function create(state: State, ctx: ActorContext, def: Definition, msg: Extract<ReservationMessage, { type: 'create' }>) {
  const { input, owner } = msg;
  let print: string | undefined;
  if (msg.idempotencyKey) {
    print = fingerprint('reservations.create', { ...input, owner: owner.customerId });
    const mem = state.idem.get(msg.idempotencyKey);
    if (mem) {
      if (mem.print !== print) throw new AppError('ERR_IDEMPOTENCY_MISMATCH');
      return mem.body;
    }
    const hit = findIdempotent(ctx.store, ctx.tenant, msg.idempotencyKey, print, ctx.clock);
    if (hit) return hit.body;
  }
  const service = resolveService(def, input.service);
  const customer = cleanCustomer(input.customer, owner.email);
  if (!customer.name && !customer.email) throw appError('ERR_VALIDATION', 'body/customer needs a name or an email');
  const answers = { ...input.answers };
  checkRequired(def, answers, customer);
  const timing = checkTiming(state, ctx, def, service, input.startTime, input.endTime, input.partySize);
  const now = ctx.clock.now();
  const data: Record<string, unknown> = {
    customerId: owner.staff && input.customerId ? input.customerId : owner.customerId,
    customer,
    reservationDefinitionId: def.id,
    definitionName: def.name,
    service: service.name,
    startTime: iso(timing.start),
    endTime: iso(timing.end),
    timezone: def.timezone,
    serviceDate: localDate(timing.start, def.timezone),
    localStartTime: timing.slotLocalTime,
    partySize: timing.partySize,
    status: 'confirmed',
    confirmationNumber: confirmationNumber(state, ctx),
    answers,
    createdBy: owner.by,
  };
  if (service.id !== undefined) data.serviceId = service.id;
  if (def.businessLocationId) data.businessLocationId = def.businessLocationId;
  if (typeof input.notes === 'string' && input.notes.trim()) data.notes = input.notes.trim().slice(0, 2000);
  const rec = newRecord(ctx.tenant, RESERVATION_DATATYPE, data, { now, state: 'confirmed' });
  const reminder = armReminder(ctx, def, rec.sk, timing.start);
  if (reminder) {
    data.reminderJobId = reminder.id;
    data.reminderDueAt = reminder.dueAt;
  }
  if (def.confirmation.enabled && (await courtesy(ctx, def, rec, 'confirmation'))) data.confirmationSentAt = iso(now);
  state.view.put(ctx.batch, rec, 0);
  queueEvent(ctx.services.webhooks, ctx.batch, ctx.tenant, 'reservation.created', rec, now);
  if (msg.idempotencyKey && print) {
    recordIdempotent(ctx.store, ctx.batch, ctx.tenant, msg.idempotencyKey, print, { status: 201, body: rec }, ctx.clock);
    state.idem.set(msg.idempotencyKey, { print, body: rec });
  }
  return rec;
}

async function update(state: State, ctx: ActorContext, def: Definition, msg: Extract<ReservationMessage, { type: 'update' }>) {
  const rec = ownBooking(state, def, msg.id, msg.owner);
  if (msg.version !== undefined && msg.version !== rec.version) {
    throw appError('ERR_VERSION_CONFLICT', `reservation ${rec.sk}`, msg.version, rec.version);
  }
  const c: UpdateReservationInput = msg.changes;
  const status = rec.data.status;
  if (status === 'cancelled') throw appError('ERR_CONFLICT', `reservation ${rec.sk} is cancelled`);
  const now = ctx.clock.now();
  const data: Record<string, unknown> = { ...rec.data };

  if (c.status === 'cancelled') {
    if (status === 'checked_in') throw appError('ERR_CONFLICT', `reservation ${rec.sk} is already checked in`);
    if (typeof data.reminderJobId === 'string') cancelJob(ctx, data.reminderJobId);
    data.reminderJobId = null;
    data.status = 'cancelled';
    data.cancelledAt = iso(now);
    const next = nextVersion(rec, { data, state: 'cancelled' }, now);
    if (def.confirmation.enabled) await courtesy(ctx, def, next, 'cancelled');
    return updated(state, ctx, next, rec.version);
  }

  if (c.customer !== undefined) data.customer = cleanCustomer({ ...(rec.data.customer as object), ...c.customer });
  if (c.notes !== undefined) data.notes = String(c.notes).trim().slice(0, 2000);
  if (c.answers && Object.keys(c.answers).length) data.answers = { ...(rec.data.answers as object), ...c.answers };
  checkRequired(def, (data.answers ?? {}) as Record<string, unknown>, (data.customer ?? {}) as Record<string, unknown>);

  const reschedule = c.startTime !== undefined || c.endTime !== undefined || c.service !== undefined || c.partySize !== undefined;
  if (reschedule) {
    if (status === 'checked_in') throw appError('ERR_CONFLICT', `reservation ${rec.sk} is checked in and can no longer be rescheduled`);
    const service = resolveService(def, c.service ?? (rec.data.serviceId as string | undefined) ?? (rec.data.service as string));
    const startRaw = c.startTime ?? rec.data.startTime;
    // A new start without a new end keeps the service's duration, not the old end.
    const endRaw = c.endTime ?? (c.startTime !== undefined || c.service !== undefined ? undefined : rec.data.endTime);
    const timing = checkTiming(state, ctx, def, service, startRaw, endRaw, c.partySize ?? rec.data.partySize, rec.sk);
    const moved = data.startTime !== iso(timing.start);
    data.service = service.name;
    if (service.id !== undefined) data.serviceId = service.id;
    else delete data.serviceId;
    data.startTime = iso(timing.start);
    data.endTime = iso(timing.end);
    data.timezone = def.timezone;
    data.serviceDate = localDate(timing.start, def.timezone);
    data.localStartTime = timing.slotLocalTime;
    data.partySize = timing.partySize;
    if (moved) {
      if (typeof data.reminderJobId === 'string') cancelJob(ctx, data.reminderJobId);
      const reminder = armReminder(ctx, def, rec.sk, timing.start);
      data.reminderJobId = reminder?.id ?? null;
      data.reminderDueAt = reminder?.dueAt ?? null;
      delete data.reminderSentAt;
    }
    const next = nextVersion(rec, { data }, now);
    if (moved && def.confirmation.enabled) await courtesy(ctx, def, next, 'updated');
    return updated(state, ctx, next, rec.version);
  }
  return updated(state, ctx, nextVersion(rec, { data }, now), rec.version);
}

/** Writes a changed reservation: the update's last step, so the event goes with the write. */
function updated(state: State, ctx: ActorContext, next: StoredRecord, ifVersion: number): StoredRecord {
  const written = state.view.put(ctx.batch, next, ifVersion);
  queueEvent(ctx.services.webhooks, ctx.batch, ctx.tenant, 'reservation.updated', written, ctx.clock.now());
  return written;
}

function receive(state: State, msg: ReservationMessage, ctx: ActorContext): unknown {
  state.view.prune();
  if (state.idem.size > 1000) state.idem.clear();
  if (state.numbers.size > 10_000) state.numbers.clear();
  switch (msg.type) {
    case 'create':
      return create(state, ctx, loadDefinition(ctx.store, ctx.tenant, ctx.key), msg);

    case 'update':
      return update(state, ctx, loadDefinition(ctx.store, ctx.tenant, ctx.key), msg);

    case 'send-reminder':
      return (async () => {
        const def = loadDefinition(ctx.store, ctx.tenant, ctx.key);
        const rec = ownBooking(state, def, msg.id, msg.owner);
        if (rec.data.status === 'cancelled') throw appError('ERR_CONFLICT', `reservation ${rec.sk} is cancelled`);
        const sent = await sendMessage(ctx, def, rec, 'reminder', def.reminder);
        if (!sent) throw appError('ERR_CONFLICT', `reservation ${rec.sk} has no email address or phone number to remind`);
        const now = ctx.clock.now();
        state.view.put(ctx.batch, nextVersion(rec, { data: { ...rec.data, reminderSentAt: iso(now) } }, now), rec.version);
        return { sent: true, reservationId: rec.sk, channel: sent.channel, to: sent.to, messageId: sent.id };
      })();

    case 'stamp-check-in': {
      const rec = state.view.get(RESERVATION_DATATYPE, msg.id);
      if (!rec || (rec.data.reservationDefinitionId ?? '') !== ctx.key) throw appError('ERR_NOT_FOUND', `reservation ${msg.id}`);
      if (rec.data.status === 'cancelled') throw appError('ERR_CONFLICT', `reservation ${rec.sk} is cancelled`);
      const now = ctx.clock.now();
      const data: Record<string, unknown> = { ...rec.data, checkedInAt: iso(now), checkInTaskId: msg.taskId, status: 'checked_in' };
      // Checked in: the reminder has nothing left to remind of.
      if (typeof data.reminderJobId === 'string') cancelJob(ctx, data.reminderJobId);
      data.reminderJobId = null;
      const checkedIn = state.view.put(ctx.batch, nextVersion(rec, { data, state: 'checked_in' }, now), rec.version);
      queueEvent(ctx.services.webhooks, ctx.batch, ctx.tenant, 'reservation.checked_in', checkedIn, now);
      return checkedIn;
    }

    case 'fire-reminder':
      return (async () => {
        completeJob(ctx, msg.jobId);
        const rec = state.view.get(RESERVATION_DATATYPE, msg.reservationId);
        // Stale firings (rescheduled, cancelled, checked in, already sent) only clean up.
        if (!rec || rec.data.reminderJobId !== msg.jobId || rec.data.status !== 'confirmed') return { sent: false };
        const def = findDefinition(ctx.store, ctx.tenant, ctx.key);
        const now = ctx.clock.now();
        const data: Record<string, unknown> = { ...rec.data, reminderJobId: null };
        const sent = def?.reminder.enabled ? await sendMessage(ctx, def, rec, 'reminder', def.reminder) : undefined;
        if (sent) data.reminderSentAt = iso(now);
        state.view.put(ctx.batch, nextVersion(rec, { data }, now), rec.version);
        return { sent: Boolean(sent) };
      })();

    case 'update-settings':
      return (state.settings = updateReservationSettings(ctx, state.settings, msg.patch));

    default:
      throw appError('ERR_BAD_REQUEST', `unknown reservations message ${(msg as { type?: unknown }).type}`);
  }
}

export const reservationsActor: ActorKind<State, ReservationMessage, unknown> = {
  kind: RESERVATIONS_ACTOR,
  activate: (ctx) => ({ view: new RecordView(ctx.store, ctx.tenant), idem: new Map(), numbers: new Set(), settings: undefined }),
  receive,
};
