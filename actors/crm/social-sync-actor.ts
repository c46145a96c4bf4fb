// Social sync (datatype `social_activity`): comments, direct messages and engagement figures pulled
// from social platforms by a connector and pushed in through the ingest route. Each item carries
// the platform's own id, so a connector that sends the same item again updates it instead of
// adding a copy. One actor per tenant applies ingests in order.
import type { ActorKind } from '../../core/actor/runtime.js';
import { newRecord, nextVersion, type StoredRecord } from '../../core/store/record.js';
import { stableId } from '../../core/stable-id.js';
import { type IngestResult, SOCIAL_ACTOR, type SocialSyncMsg } from './messages.js';

export const SOCIAL_ACTIVITY = 'social_activity';

export function socialRecordId(platform: string, kind: string, externalId: string): string {
  return stableId('social', platform, kind, externalId);
}

export const socialSyncActor: ActorKind<null, SocialSyncMsg, IngestResult> = {
  kind: SOCIAL_ACTOR,
  // Whether an item is new is read from the store: a second ingest right behind the first must see it.
  readsOwnWrites: true,
  activate: () => null,
  receive(_state, msg, ctx) {
    const now = ctx.clock.now();
    const out: IngestResult = { created: [], updated: [] };
    const inBatch = new Map<string, StoredRecord>();
    for (const item of msg.items) {
      const platform = item.platform.toLowerCase();
      const sk = socialRecordId(platform, item.kind, item.externalId);
      const data = {
        ...item,
        platform,
        at: new Date(item.at ? Date.parse(item.at) : now).toISOString(),
        ...(item.kind === 'message' ? { direction: item.direction ?? 'inbound' } : {}),
      };
      // The same item twice in one ingest: the later copy wins, as one write.
      const prev = ctx.store.getRecord(ctx.tenant, SOCIAL_ACTIVITY, sk);
      const rec = prev
        ? nextVersion(prev, { data: { ...data, firstSeenAt: prev.data.firstSeenAt } }, now)
        : newRecord(ctx.tenant, SOCIAL_ACTIVITY, { ...data, firstSeenAt: new Date(now).toISOString() }, { sk, state: item.kind, now });
      inBatch.set(sk, rec);
    }
    for (const rec of inBatch.values()) {
      ctx.batch.putRecord(rec);
      (rec.version === 1 ? out.created : out.updated).push(rec);
    }
    return out;
  },
};
