// One lead (actor key: the lead's id) is written by one actor, so its writes are applied one at a
// time. Writes stay optimistic (spec: Versioning 1): an update or delete carries the version the
// caller read, and a stale one answers 409, so two editors never overwrite each other silently.
//
// The actor keeps no copy of the lead: the generic record store (actors/records) may also write a
// lead, so each message reads the committed record, and every write carries the version it read
// (ifVersion), which the store checks in the commit's own transaction.
import type { ActorKind } from '../../core/actor/runtime.js';
import { AppError, appError } from '../../core/errors.js';
import { newRecord, nextVersion, type StoredRecord } from '../../core/store/record.js';
import { queueEvent } from '../../core/webhooks/catalogue.js';
import { LEAD, changedLeadData, newLeadData } from './leads.js';
import { LEAD_ACTOR, type LeadMsg } from './messages.js';

export const leadActor: ActorKind<Record<string, never>, LeadMsg, StoredRecord> = {
  kind: LEAD_ACTOR,
  // Each message reads the store, so it must see what the previous one wrote.
  readsOwnWrites: true,
  activate: () => ({}),
  receive(_state, msg, ctx) {
    const now = ctx.clock.now();
    if (msg.type === 'create') {
      const rec = newRecord(ctx.tenant, LEAD, newLeadData(msg.fields), { sk: ctx.key, now });
      ctx.batch.putRecord(rec, 0);
      queueEvent(ctx.services.webhooks, ctx.batch, ctx.tenant, 'lead.created', rec, now);
      return rec;
    }
    const cur = ctx.store.getRecord(ctx.tenant, LEAD, ctx.key);
    if (!cur) throw appError('ERR_NOT_FOUND', `lead ${ctx.key}`);
    if (msg.type === 'delete') {
      ctx.batch.deleteRecord(ctx.tenant, LEAD, ctx.key, msg.version ?? cur.version);
      return cur;
    }
    if (cur.version !== msg.version) {
      throw new AppError('ERR_VERSION_CONFLICT', [`lead ${ctx.key}`, msg.version, cur.version]);
    }
    const next = nextVersion(cur, { data: changedLeadData(cur.data, msg.changes), state: 'updated' }, now);
    ctx.batch.putRecord(next, msg.version);
    return next;
  },
};
