// One event as the kit knows it from the server: its settings, keys, lists and tickets, folded
// from the door-feed pages (a full sync, then deltas from the saved cursor) and the door keys.
// Plain data, so that storage can keep it as JSON and a restarted app decides as before.
import type { DoorKeys, FeedEvent, FeedList, FeedPage, FeedRevoked, FeedTicket } from './types.js';

export interface EventView {
  event: FeedEvent;
  keys: DoorKeys | null;
  tickets: Record<string, FeedTicket>;
  lists: Record<string, FeedList>;
  /** Ticket id → why its codes no longer open the door (refunded, cancelled, deleted). */
  revoked: Record<string, FeedRevoked>;
  /** The cursor of the last complete sync: the next sync asks for what changed after it. */
  cursor: string | null;
  /** The cursor of a sync under way: an interrupted download resumes from it. */
  pending: string | null;
  syncedAt: string | null;
  /** Bumped by every page folded in (indexes over the tickets are rebuilt on a change). */
  version: number;
}

export function emptyView(event: FeedEvent): EventView {
  return { event, keys: null, tickets: {}, lists: {}, revoked: {}, cursor: null, pending: null, syncedAt: null, version: 0 };
}

/**
 * Folds one feed page into the view. `lists` on a page is every list of the event (first page of
 * a sync, or some list changed): it replaces what the view had. A transferred ticket is in
 * `revoked` and in `tickets` with its new codeTag: the tag already voids its earlier codes, and
 * the ticket itself stays good.
 */
export function applyPage(view: EventView, page: FeedPage, first: boolean): void {
  view.event = page.event;
  view.version++;
  if (page.lists.length > 0 || first) {
    view.lists = {};
    for (const l of page.lists) view.lists[l.id] = l;
  }
  for (const t of page.tickets) {
    view.tickets[t.id] = t;
    // Changed since a revocation and not revoked again on this page: it stands again.
    if (!page.revoked.some((r) => r.id === t.id)) delete view.revoked[t.id];
  }
  for (const r of page.revoked) {
    if (r.reason === 'transferred') continue;
    view.revoked[r.id] = r;
    if (r.reason === 'deleted') delete view.tickets[r.id];
  }
}

/** Ticket id by its static code, compared case-blind (the server tries the code as typed, upper and lower). */
export function byNumber(view: EventView): Map<string, string> {
  const m = new Map<string, string>();
  for (const t of Object.values(view.tickets)) if (t.number) m.set(t.number.toLowerCase(), t.id);
  return m;
}
