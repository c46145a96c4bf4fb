// Customer activity (datatype `customer_activity`, data `{email, type, name, importance,
// properties, at}`): what a person did in the apps, for the CRM timeline, a summary and the chat
// journey. One actor per email address serializes recording and erasure, so an erase never races
// a write for the same person and "nothing left afterwards" holds.
import type { ActorKind } from '../../core/actor/runtime.js';
import { newRecord, type StoredRecord } from '../../core/store/record.js';
import { type ActivityMsg, type ActivityType, CUSTOMER_ACTIVITY_ACTOR } from './messages.js';

export const CUSTOMER_ACTIVITY = 'customer_activity';

/** Importance when the caller sends none: a ticket purchase is 5 (spec: CRM), views count least. */
const DEFAULT_IMPORTANCE: Record<ActivityType, number> = { screen_view: 1, search: 2, action: 2, event_action: 3 };
const TICKET_PURCHASE = /ticket[\s_.-]*purchase|purchase[\s_.-]*ticket/i;

export function defaultImportance(type: ActivityType, name: string): number {
  if (type === 'event_action' && TICKET_PURCHASE.test(name)) return 5;
  return DEFAULT_IMPORTANCE[type];
}

export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

export const customerActivityActor: ActorKind<null, ActivityMsg, StoredRecord | { erased: number }> = {
  kind: CUSTOMER_ACTIVITY_ACTOR,
  // Nothing worth holding in memory: the records are the state, read once earlier writes landed
  // (an erase right behind a record must see it).
  readsOwnWrites: true,
  activate: () => null,
  idleMs: 60_000,
  receive(_state, msg, ctx) {
    if (msg.type === 'record') {
      const a = msg.activity;
      const now = ctx.clock.now();
      const rec = newRecord(
        ctx.tenant,
        CUSTOMER_ACTIVITY,
        {
          email: ctx.key,
          type: a.type,
          name: a.name,
          importance: a.importance ?? defaultImportance(a.type, a.name),
          properties: a.properties ?? {},
          at: new Date(a.at ? Date.parse(a.at) : now).toISOString(),
        },
        { now },
      );
      ctx.batch.putRecord(rec, 0);
      return rec;
    }
    const all = ctx.store.scan(ctx.tenant, CUSTOMER_ACTIVITY, { 'data.email': ctx.key });
    for (const r of all) ctx.batch.deleteRecord(ctx.tenant, CUSTOMER_ACTIVITY, r.sk);
    return { erased: all.length };
  },
};

/** Newest first; records with the same instant keep the order they were written in, reversed. */
export function byNewest(a: StoredRecord, b: StoredRecord): number {
  const ta = String(a.data.at);
  const tb = String(b.data.at);
  if (ta !== tb) return ta < tb ? 1 : -1;
  return a.sk < b.sk ? 1 : a.sk > b.sk ? -1 : 0;
}

export interface ActivitySummary {
  email: string;
  total: number;
  byType: Record<ActivityType, number>;
  firstSeen: string | null;
  lastSeen: string | null;
  topScreens: Array<{ name: string; count: number }>;
  topActions: Array<{ name: string; count: number }>;
  /** Sum of importance, each weighted by recency (half-life 30 days), capped at 100. */
  engagementScore: number;
}

export const ENGAGEMENT_HALF_LIFE_DAYS = 30;
const DAY_MS = 86_400_000;

function top(counts: Map<string, number>, n: number): Array<{ name: string; count: number }> {
  return [...counts.entries()]
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
    .slice(0, n)
    .map(([name, count]) => ({ name, count }));
}

export function summarize(email: string, records: readonly StoredRecord[], now: number): ActivitySummary {
  const byType = { screen_view: 0, action: 0, search: 0, event_action: 0 } as Record<ActivityType, number>;
  const screens = new Map<string, number>();
  const actions = new Map<string, number>();
  let first: string | null = null;
  let last: string | null = null;
  let score = 0;
  for (const r of records) {
    const d = r.data as { type: ActivityType; name: string; importance: number; at: string };
    if (d.type in byType) byType[d.type]++;
    if (d.type === 'screen_view') screens.set(d.name, (screens.get(d.name) ?? 0) + 1);
    if (d.type === 'action' || d.type === 'event_action') actions.set(d.name, (actions.get(d.name) ?? 0) + 1);
    if (first === null || d.at < first) first = d.at;
    if (last === null || d.at > last) last = d.at;
    // Activity dated in the future counts as now, not more.
    const ageDays = Math.max(0, now - Date.parse(d.at)) / DAY_MS;
    score += Number(d.importance ?? 0) * Math.pow(0.5, ageDays / ENGAGEMENT_HALF_LIFE_DAYS);
  }
  return {
    email,
    total: records.length,
    byType,
    firstSeen: first,
    lastSeen: last,
    topScreens: top(screens, 5),
    topActions: top(actions, 5),
    engagementScore: Math.min(100, Math.round(score * 10) / 10),
  };
}
