// Scans that name no event and whose code matches no ticket of the tenant: they belong to no
// event's log, but every scan is logged (issue 5), so they go to the tenant's `scan:_unmatched`
// log, written by this one actor per tenant (the log's single writer owns its sequence).
import type { ActorKind } from '../../core/actor/runtime.js';
import { UNMATCHED_SCANS, type UnmatchedScanMsg } from './messages.js';

export const UNMATCHED_LOG = 'scan:_unmatched';

interface State {
  seq: number;
}

export const unmatchedScansActor: ActorKind<State, UnmatchedScanMsg, { success: false; reason: 'invalid_code' }> = {
  kind: UNMATCHED_SCANS,
  activate: (ctx) => ({ seq: ctx.store.lastLogSeq(ctx.tenant, UNMATCHED_LOG) }),
  receive(state, entry, ctx) {
    ctx.batch.append(ctx.tenant, UNMATCHED_LOG, ++state.seq, entry);
    return { success: false, reason: 'invalid_code' };
  },
};
