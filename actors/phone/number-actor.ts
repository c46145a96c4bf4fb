// One phone number (actor key: its record id, numberRecordId) is written by one actor, so two
// admins changing one number together are applied one after the other: each change keeps the
// settings the other did not name, and none is lost. Every write still carries the version it
// read (ifVersion): the generic record store (actors/records) may also write the record, and the
// store checks the version in the commit's own transaction (409 when it moved).
import type { ActorKind } from '../../core/actor/runtime.js';
import { appError } from '../../core/errors.js';
import { newRecord, nextVersion, type StoredRecord } from '../../core/store/record.js';
import { PHONE_NUMBER } from './numbers.js';
import { type NumberMsg, PHONE_NUMBER_ACTOR, type SavedNumber } from './messages.js';

export const phoneNumberActor: ActorKind<Record<string, never>, NumberMsg, SavedNumber | StoredRecord> = {
  kind: PHONE_NUMBER_ACTOR,
  // Each message reads the committed record, so it must see what the previous one wrote.
  readsOwnWrites: true,
  activate: () => ({}),
  receive(_state, msg, ctx) {
    const cur = ctx.store.getRecord(ctx.tenant, PHONE_NUMBER, ctx.key);
    if (msg.type === 'remove') {
      if (!cur) throw appError('ERR_NOT_FOUND', `phone number ${ctx.key}`);
      ctx.batch.deleteRecord(ctx.tenant, PHONE_NUMBER, cur.sk, cur.version);
      return cur;
    }
    const input = msg.settings;
    const data = {
      number: input.number,
      label: input.label ?? (cur?.data.label as string | undefined) ?? input.number,
      capabilities: input.capabilities ?? (cur?.data.capabilities as string[] | undefined) ?? ['voice', 'sms'],
      assignedTo: (input.assignedTo ?? (cur?.data.assignedTo as string[] | undefined) ?? []).map((e) => e.toLowerCase()),
    };
    const now = ctx.clock.now();
    const rec = cur ? nextVersion(cur, { data }, now) : newRecord(ctx.tenant, PHONE_NUMBER, data, { sk: ctx.key, state: 'active', now });
    ctx.batch.putRecord(rec, cur ? cur.version : 0);
    return { rec, created: !cur, assignedTo: data.assignedTo };
  },
};
