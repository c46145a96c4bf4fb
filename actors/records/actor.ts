// The records actor: one per tenant, the single writer for the generic record store
// (`/repository/*` writes and reservation notes). The store checks versions atomically at commit;
// the actor's mailbox is what makes an idempotent create check, create and record in one step.
//
// Hot state is only what is written but maybe not yet committed: the idempotency keys of creates
// whose commit is in flight, so a retry arriving meanwhile is answered from memory instead of
// creating a second record. After a failure the runtime re-activates the actor only once every
// earlier commit has landed, so an empty map is then exact (the store has the rest).
import type { ActivationContext, ActorContext, ActorKind } from '../../core/actor/runtime.js';
import { AppError, appError } from '../../core/errors.js';
import {
  findIdempotent,
  IDEMPOTENCY_TTL_MS,
  recordIdempotent,
  type IdempotentResult,
} from '../../core/idempotency.js';
import { newRecord, nextVersion, type StoredRecord } from '../../core/store/record.js';
import { numberClaim, numberPointer, TICKET, TICKET_CODE } from '../event-records/index.js';
import { applyPartial, assertPartialKeys } from './partial-update.js';
import { assertWritable } from './policy.js';
import { type CreateReply, RECORDS_ACTOR, type RecordsMsg } from './messages.js';
export const NOTE_DATATYPE = 'note';

interface PendingKey {
  print: string;
  result: IdempotentResult<StoredRecord>;
  expiresAt: number;
}

interface RecordsState {
  /** Idempotency keys recorded by this activation, newest last (bounded). */
  readonly pending: Map<string, PendingKey>;
}

/** Creates kept in memory after their commit; far more than can be in flight at once. */
const PENDING_CAP = 4096;

function conflict(datatype: string, sk: string, expected: number, stored: number): never {
  throw appError('ERR_VERSION_CONFLICT', `${datatype} ${sk}`, expected, stored);
}

/**
 * Said on the bus once a write through the record store has committed: areas that keep records in
 * memory (the POS keeps its open tabs) hear of writes made around them.
 */
export const RECORD_WRITTEN = 'records.written';

function written(ctx: ActorContext, datatype: string, sk: string, rec?: StoredRecord): void {
  // A ticket names its event: the event's door feed hears of a ticket written or deleted around its scanner.
  const event = datatype === TICKET ? rec?.data.event : undefined;
  ctx.publish(`${RECORD_WRITTEN}.${ctx.tenant}`, typeof event === 'string' ? { datatype, sk, event } : { datatype, sk });
}

/**
 * Every record-store write of a record: the record, its announcement on the bus (see
 * RECORD_WRITTEN) and, for a ticket, its number pointer for the door (see numberPointer).
 */
function putRecord(ctx: ActorContext, rec: StoredRecord, ifVersion: number): void {
  ctx.batch.putRecord(rec, ifVersion);
  written(ctx, rec.datatype, rec.sk, rec);
  if (rec.datatype !== TICKET || typeof rec.data.number !== 'string' || rec.data.number === '') return;
  const pointer = numberPointer(rec, ctx.store.getRecord(ctx.tenant, TICKET_CODE, numberClaim(rec.data.number)), ctx.clock.now());
  if (pointer) ctx.batch.putRecord(pointer);
}

function current(ctx: ActorContext, datatype: string, sk: string): StoredRecord {
  const rec = ctx.store.getRecord(ctx.tenant, datatype, sk);
  if (!rec) throw appError('ERR_NOT_FOUND', `${datatype} ${sk}`);
  return rec;
}

function create(state: RecordsState, msg: Extract<RecordsMsg, { type: 'create' }>, ctx: ActorContext): CreateReply {
  assertWritable(msg.datatype, 'create', msg.roles);
  const now = ctx.clock.now();
  const idem = msg.idempotency;
  if (idem) {
    const inFlight = state.pending.get(idem.key);
    if (inFlight && inFlight.expiresAt > now) {
      if (inFlight.print !== idem.print) throw appError('ERR_IDEMPOTENCY_MISMATCH');
      return { ...inFlight.result, replayed: true };
    }
    const first = findIdempotent<StoredRecord>(ctx.store, ctx.tenant, idem.key, idem.print, ctx.clock);
    if (first) return { ...first, replayed: true };
  }
  const rec = newRecord(ctx.tenant, msg.datatype, msg.data, { state: msg.state, now });
  putRecord(ctx, rec, 0);
  const result: IdempotentResult<StoredRecord> = { status: 201, body: rec };
  if (idem) {
    recordIdempotent(ctx.store, ctx.batch, ctx.tenant, idem.key, idem.print, result, ctx.clock);
    state.pending.set(idem.key, { print: idem.print, result, expiresAt: now + IDEMPOTENCY_TTL_MS });
    if (state.pending.size > PENDING_CAP) state.pending.delete(state.pending.keys().next().value!);
  }
  return { ...result, replayed: false };
}

function update(msg: Extract<RecordsMsg, { type: 'update' }>, ctx: ActorContext): StoredRecord {
  assertWritable(msg.datatype, 'update', msg.roles);
  const cur = current(ctx, msg.datatype, msg.sk);
  if (cur.version !== msg.version) conflict(msg.datatype, msg.sk, msg.version, cur.version);
  // Shallow merge: each top-level key of `data` replaces that field (spec: "modified fields").
  const changes: Partial<StoredRecord> = { data: { ...cur.data, ...msg.data } };
  if (msg.state !== undefined) changes.state = msg.state;
  const next = nextVersion(cur, changes, ctx.clock.now());
  // The store re-checks the version in the commit: a write by another actor in between is a 409.
  putRecord(ctx, next, cur.version);
  return next;
}

function updatePartial(msg: Extract<RecordsMsg, { type: 'update-partial' }>, ctx: ActorContext): boolean {
  assertWritable(msg.datatype, 'update-partial', msg.roles);
  assertPartialKeys(msg.set);
  const cur = current(ctx, msg.datatype, msg.sk);
  if (msg.version !== undefined && cur.version !== msg.version) conflict(msg.datatype, msg.sk, msg.version, cur.version);
  const applied = applyPartial(cur, msg.set);
  putRecord(ctx, nextVersion(applied, {}, ctx.clock.now()), cur.version);
  return true;
}

function remove(msg: Extract<RecordsMsg, { type: 'delete' }>, ctx: ActorContext): { deleted: true; datatype: string; sk: string } {
  assertWritable(msg.datatype, 'delete', msg.roles);
  let cur: StoredRecord;
  try {
    cur = current(ctx, msg.datatype, msg.sk);
  } catch (err) {
    // A record that cannot be decoded can still be removed, unconditionally (its version is
    // unknown, so a delete that names one is refused).
    if (!(err instanceof AppError) || err.code !== 'ERR_RECORD_UNREADABLE' || msg.version !== undefined) throw err;
    ctx.batch.deleteRecord(ctx.tenant, msg.datatype, msg.sk);
    written(ctx, msg.datatype, msg.sk);
    return { deleted: true, datatype: msg.datatype, sk: msg.sk };
  }
  if (msg.version !== undefined && cur.version !== msg.version) conflict(msg.datatype, msg.sk, msg.version, cur.version);
  ctx.batch.deleteRecord(ctx.tenant, msg.datatype, msg.sk, cur.version);
  written(ctx, msg.datatype, msg.sk, cur);
  return { deleted: true, datatype: msg.datatype, sk: msg.sk };
}

function addNote(msg: Extract<RecordsMsg, { type: 'add-note' }>, ctx: ActorContext): StoredRecord {
  const { subject } = msg;
  if (!ctx.store.getRecord(ctx.tenant, subject.datatype, subject.id)) throw appError('ERR_NOT_FOUND', `${subject.datatype} ${subject.id}`);
  const note = newRecord(
    ctx.tenant,
    NOTE_DATATYPE,
    { subjectType: subject.datatype, subjectId: subject.id, comment: msg.comment, author: msg.author },
    { now: ctx.clock.now() },
  );
  // A note is always a new record: notes are appended, never replaced.
  ctx.batch.putRecord(note, 0);
  return note;
}

export const recordsActor: ActorKind<RecordsState, RecordsMsg, unknown> = {
  kind: RECORDS_ACTOR,
  activate(_ctx: ActivationContext): RecordsState {
    return { pending: new Map() };
  },
  receive(state, msg, ctx) {
    switch (msg.type) {
      case 'create':
        return create(state, msg, ctx);
      case 'update':
        return update(msg, ctx);
      case 'update-partial':
        return updatePartial(msg, ctx);
      case 'delete':
        return remove(msg, ctx);
      case 'add-note':
        return addNote(msg, ctx);
      default:
        throw appError('ERR_BAD_REQUEST', `unknown records message ${(msg as { type: string }).type}`);
    }
  },
};
