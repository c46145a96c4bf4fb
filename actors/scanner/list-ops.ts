// Check-in list changes: create, change, delete. They run in the event's scanner actor, the
// lists' single writer, so a list changes between two scans, never during one, and the door's
// memory of it changes with its record. Checks come before any change (refusalKeepsState).
import type { ActorContext } from '../../core/actor/runtime.js';
import { AppError, appError } from '../../core/errors.js';
import { newId } from '../../core/ids.js';
import { newRecord, nextVersion, type StoredRecord } from '../../core/store/record.js';
import { TICKET_TYPE } from '../event-records/index.js';
import { cancelJob, scheduleJob } from '../../core/scheduler.js';
import { CHECKIN_LIST, checkinList, EXIT_ALL_JOB, exitAllJobId, MAX_LISTS_PER_EVENT, nextExitAt } from './checkin-list.js';
import type { ListInput, ListOpMsg, ListRules } from './messages.js';
import type { ScannerState } from './state.js';

type Data = Record<string, unknown>;

/** The event's list `id`, or a 404 (lists of other events are not this actor's). */
function listOf(st: ScannerState, id: string): StoredRecord {
  const rec = st.lists.has(id) ? st.overlay.get(CHECKIN_LIST, id) : undefined;
  if (!rec) throw appError('ERR_NOT_FOUND', `check-in list ${id}`);
  return rec;
}

function checkTypes(st: ScannerState, ids: string[]): void {
  ids.forEach((id, i) => {
    const type = st.store.getRecord(st.tenant, TICKET_TYPE, id);
    if (!type || type.data.event !== st.eventId) throw appError('ERR_VALIDATION', `body/ticketTypeIds/${i} ${id} is not a ticket type of event ${st.eventId}`);
  });
}

function checkZones(st: ScannerState, zones: string[]): void {
  zones.forEach((z, i) => {
    if (!st.ev!.zoneById.has(z)) throw appError('ERR_VALIDATION', `body/zones/${i} "${z}" is not a zone of event ${st.eventId}`);
  });
}

function rulesOf(r: ListRules): Data {
  const from = r.validFrom === undefined ? null : Date.parse(r.validFrom);
  const until = r.validUntil === undefined ? null : Date.parse(r.validUntil);
  if (from !== null && until !== null && until < from) throw appError('ERR_VALIDATION', 'body/rules/validUntil must not be before body/rules/validFrom');
  return {
    validFrom: from === null ? null : new Date(from).toISOString(),
    validUntil: until === null ? null : new Date(until).toISOString(),
    maxEntries: r.maxEntries ?? null,
    maxEntriesPerDay: r.maxEntriesPerDay ?? null,
    weekdays: r.weekdays ? [...new Set(r.weekdays)].sort((a, b) => a - b) : null,
  };
}

/** The fields `input` sets, checked; duplicates in the id arrays are dropped. */
function fieldsOf(st: ScannerState, input: ListInput): Data {
  const out: Data = {};
  if (input.name !== undefined) out.name = input.name;
  if (input.ticketTypeIds !== undefined) {
    const ids = input.ticketTypeIds === null ? null : [...new Set(input.ticketTypeIds)];
    if (ids) checkTypes(st, ids);
    out.ticketTypeIds = ids;
  }
  if (input.zones !== undefined) {
    const zones = input.zones === null ? null : [...new Set(input.zones)];
    if (zones) checkZones(st, zones);
    out.zones = zones;
  }
  if (input.allowReentry !== undefined) out.allowReentry = input.allowReentry;
  if (input.allowMultipleEntries !== undefined) out.allowMultipleEntries = input.allowMultipleEntries;
  if (input.exitAllAt !== undefined) out.exitAllAt = input.exitAllAt;
  if (input.rules !== undefined) out.rules = rulesOf(input.rules);
  return out;
}

/**
 * Arms the list's next automatic check-out, or cancels it when `exitAllAt` is unset: one durable
 * job per list (core/scheduler.ts), written in the batch of the list's change, so a restart or
 * the node that takes the tenant over fires it.
 */
export function armExitAll(st: ScannerState, ctx: ActorContext, listId: string, exitAllAt: string | null): void {
  const id = exitAllJobId(listId);
  const due = exitAllAt === null ? undefined : nextExitAt(exitAllAt, st.door.timezone, ctx.clock.now());
  if (due === undefined) cancelJob(ctx, id);
  else scheduleJob(ctx, EXIT_ALL_JOB, due, { eventId: st.eventId, listId, at: exitAllAt! }, id);
}

export function listOp(st: ScannerState, msg: ListOpMsg, ctx: ActorContext): unknown {
  const now = ctx.clock.now();
  switch (msg.type) {
    case 'list-create': {
      if (st.lists.size >= MAX_LISTS_PER_EVENT) throw appError('ERR_CONFLICT', `event ${st.eventId} has ${st.lists.size} check-in lists, the most an event may have`);
      const data: Data = {
        event: st.eventId,
        name: msg.input.name,
        ticketTypeIds: null,
        zones: null,
        allowReentry: null,
        allowMultipleEntries: false,
        exitAllAt: null,
        rules: rulesOf({}),
        ...fieldsOf(st, msg.input),
        createdBy: msg.by,
      };
      const rec = newRecord(st.tenant, CHECKIN_LIST, data, { sk: newId(now), state: 'active', now });
      st.overlay.put(ctx.batch, rec, 0);
      st.lists.set(rec.sk, checkinList(rec));
      st.feed.list(ctx.batch, rec.sk, now);
      if (rec.data.exitAllAt) armExitAll(st, ctx, rec.sk, rec.data.exitAllAt as string);
      return rec;
    }
    case 'list-update': {
      const cur = listOf(st, msg.listId);
      if (msg.version !== undefined && msg.version !== cur.version) throw new AppError('ERR_VERSION_CONFLICT', [`${CHECKIN_LIST} ${cur.sk}`, msg.version, cur.version]);
      const next = nextVersion(cur, { data: { ...cur.data, ...fieldsOf(st, msg.input), event: st.eventId } }, now);
      st.overlay.put(ctx.batch, next, cur.version);
      st.lists.set(next.sk, checkinList(next));
      st.feed.list(ctx.batch, next.sk, now);
      if (msg.input.exitAllAt !== undefined && msg.input.exitAllAt !== cur.data.exitAllAt) armExitAll(st, ctx, next.sk, msg.input.exitAllAt);
      return next;
    }
    case 'list-delete': {
      const cur = listOf(st, msg.listId);
      st.overlay.delete(ctx.batch, cur);
      st.lists.delete(cur.sk);
      st.feed.list(ctx.batch, cur.sk, now);
      if (cur.data.exitAllAt) cancelJob(ctx, exitAllJobId(cur.sk));
      // Its scans stay in the log (the event's counts keep them); its door goes.
      st.door.lists.delete(cur.sk);
      return true;
    }
  }
}

/** The event's lists, as stored (activation and reload). */
export function loadLists(st: ScannerState): void {
  st.lists.clear();
  for (const r of st.store.scan(st.tenant, CHECKIN_LIST, { 'data.event': st.eventId })) {
    const rec = st.overlay.get(CHECKIN_LIST, r.sk) ?? r;
    st.lists.set(rec.sk, checkinList(rec));
  }
}
