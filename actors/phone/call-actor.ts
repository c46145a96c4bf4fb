// Calls and their recordings, as the voice provider reports them through the inbound webhook
// (datatypes `phone_call` and `call_recording`, ids derived from the provider's SIDs). A provider
// sends several status callbacks per call, possibly out of order and possibly twice: one actor
// per call SID merges them, and a final status (completed, busy, failed, no-answer, canceled)
// is never replaced by an earlier one that arrives late.
import type { ActorKind, ActivationContext } from '../../core/actor/runtime.js';
import { newRecord, nextVersion, type Data, type StoredRecord } from '../../core/store/record.js';
import { stableId } from '../../core/stable-id.js';
import { type CallEvent, type CallReply, PHONE_CALL_ACTOR } from './messages.js';

export const PHONE_CALL = 'phone_call';
export const CALL_RECORDING = 'call_recording';

export const CALL_STATUSES = ['queued', 'ringing', 'in-progress', 'completed', 'busy', 'failed', 'no-answer', 'canceled'] as const;
const FINAL = new Set(['completed', 'busy', 'failed', 'no-answer', 'canceled']);

export function callRecordId(sid: string): string {
  return stableId('call', sid);
}
export function recordingRecordId(sid: string): string {
  return stableId('recording', sid);
}

type State = { call: StoredRecord | undefined };

export const phoneCallActor: ActorKind<State, CallEvent, CallReply> = {
  kind: PHONE_CALL_ACTOR,
  // Recordings are looked up in the store: a callback right behind another must see its writes.
  readsOwnWrites: true,
  activate(ctx: ActivationContext): State {
    return { call: ctx.store.getRecord(ctx.tenant, PHONE_CALL, ctx.key) };
  },
  receive(state, ev, ctx) {
    const now = ctx.clock.now();
    const iso = new Date(now).toISOString();
    const cur = state.call;
    const old = (cur?.data ?? {}) as Data;
    const keepStatus = typeof old.status === 'string' && FINAL.has(old.status) && !FINAL.has(ev.status);
    const data: Data = {
      sid: ev.sid,
      direction: ev.direction,
      from: ev.from,
      to: ev.to,
      status: keepStatus ? old.status : ev.status,
      durationSeconds: ev.durationSeconds ?? old.durationSeconds ?? null,
      startedAt: ev.startedAt ?? old.startedAt ?? iso,
      endedAt: ev.endedAt ?? old.endedAt ?? (FINAL.has(ev.status) ? iso : null),
      recordingSids: Array.isArray(old.recordingSids) ? [...(old.recordingSids as string[])] : [],
      // `at` orders the communications lists: when the call started.
      at: old.at ?? ev.startedAt ?? iso,
    };
    let recording: StoredRecord | undefined;
    if (ev.recording) {
      const rid = recordingRecordId(ev.recording.sid);
      const seen = ctx.store.getRecord(ctx.tenant, CALL_RECORDING, rid);
      const rdata: Data = {
        sid: ev.recording.sid,
        callSid: ev.sid,
        url: ev.recording.url,
        durationSeconds: ev.recording.durationSeconds ?? null,
        from: ev.from,
        to: ev.to,
        direction: ev.direction,
        at: seen?.data.at ?? iso,
      };
      recording = seen
        ? nextVersion(seen, { data: rdata }, now)
        : newRecord(ctx.tenant, CALL_RECORDING, rdata, { sk: rid, state: 'available', now });
      ctx.batch.putRecord(recording, seen ? seen.version : 0);
      if (!(data.recordingSids as string[]).includes(ev.recording.sid)) (data.recordingSids as string[]).push(ev.recording.sid);
    }
    const next = cur
      ? nextVersion(cur, { data, state: String(data.status) }, now)
      : newRecord(ctx.tenant, PHONE_CALL, data, { sk: ctx.key, state: String(data.status), now });
    ctx.batch.putRecord(next, cur ? cur.version : 0);
    state.call = next;
    return { call: next, recording };
  },
};
