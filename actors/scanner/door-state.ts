// The door's memory of one event: who is inside and where, per-zone occupancy, the check-in
// counters and the nonces of offline scans, for the event as a whole and for each of its check-in
// lists. It is a pure fold over the scan log: the live path and activation both go through
// `apply`, so what a restart rebuilds is exactly what was answered.
import { foldPatch, type DoorPatch } from './door-fields.js';
import { DoorTally } from './door-tally.js';
import { localDay } from './local-day.js';
import { ScanRate } from './scan-rate.js';
import type { ScanEntry } from './scan-entry.js';

/** Days of entries a list remembers per ticket for `maxEntriesPerDay` (a week and a day). */
const DAYS_KEPT = 8;

export interface NonceResult {
  ok: boolean;
  reason: string | null;
  ticketId: string | null;
  /** The scan's sequence in the log (what an annulment by nonce names). */
  seq: number;
  /** An offline scan (its answer says so), and its conflict reason when it was one. */
  offline?: true;
  conflict?: string;
}

/**
 * The door of one check-in list: its own counters and who is inside on it (a ticket can be
 * inside the main hall list and the lounge list at once), and the entries its rules count.
 */
export class ListDoor extends DoorTally {
  /** Ticket id → successful entries on this list. */
  readonly entries = new Map<string, number>();
  /**
   * Local day (the event's time zone, days since 1970) → ticket id → its entries that day, for the
   * latest DAYS_KEPT days with entries: an offline scan uploaded late still counts on its own day.
   */
  readonly days = new Map<number, Map<string, number>>();
}

export class DoorState extends DoorTally {
  /** Nonce of an offline scan → its original answer. */
  readonly nonces = new Map<string, NonceResult>();
  /** Sequence of the last applied scan log entry. */
  seq = 0;
  /** Every entry up to this sequence is in the ticket records (the `door-materialized` kv). */
  materialized = 0;
  /**
   * Ticket id → door fields the log holds and its record does not yet, in the order they fell
   * behind (ascending `since`): the materializer writes them from the front.
   */
  readonly behind = new Map<string, DoorPatch>();
  /** List id → its door. `inside` (inherited) holds the scans that name no list. */
  readonly lists = new Map<string, ListDoor>();
  /** Ticket id → how many lists it is inside on (scans naming no list keep none here). */
  readonly onLists = new Map<string, number>();
  /** Tickets inside on some list and not at the event's own door: with `inside`, everyone inside once. */
  private listOnly = 0;
  /** The event's time zone: a list's entries per day are counted by its local days. */
  timezone = 'UTC';
  /** Sequence of an annulled scan → sequence of its annulment. */
  readonly annulled = new Map<number, number>();
  /** Sequence of an annulled scan → the ticket's scan before it that still stood (0: none): `standing` skips annulled ones. */
  readonly annulledPrev = new Map<number, number>();
  /** Tickets whose first entry was annulled while later entries stood: the attendee goes with the last of them. */
  private readonly firstAnnulled = new Set<string>();
  /** Scans per minute per checkpoint over the last hour (the live door view's chart). */
  readonly rate = new ScanRate();

  list(id: string): ListDoor {
    let l = this.lists.get(id);
    if (!l) this.lists.set(id, (l = new ListDoor()));
    return l;
  }

  /** Applies entry `seq` (the next one) of the log; answers the ticket's door fields not yet in its record. */
  apply(e: ScanEntry, seq: number): DoorPatch | undefined {
    this.seq = seq;
    let patch: DoorPatch | undefined;
    if (e.ok && e.ticketId && seq > this.materialized) {
      patch = this.behind.get(e.ticketId);
      // Folded in place: the map keeps the ticket where it first fell behind.
      if (patch) foldPatch(patch, e, seq);
      else this.behind.set(e.ticketId, (patch = foldPatch(undefined, e, seq)));
    }
    const list = e.list ? this.list(e.list) : undefined;
    // Whose `inside` the scan moves: its list's, or the event's own door.
    const door: DoorTally = list ?? this;
    if (e.kind === 'annul') {
      this.unapply(e, seq, list, door);
      return patch;
    }
    this.rate.add(e.checkpoint, e.at);
    if (e.ok && e.ticketId) {
      const prev = door.last.get(e.ticketId);
      if (prev !== undefined) e.prev = prev;
      door.last.set(e.ticketId, seq);
    }
    if (e.kind === 'in') {
      this.countIn(e);
      list?.countIn(e);
      if (e.ok) {
        const id = e.ticketId;
        if (id) {
          const was = door.inside.get(id);
          // A list allowing multiple entries lets a ticket in while inside: it moves, not doubles.
          if (was !== undefined) {
            this.zone(was).exits++;
            if (list) list.zone(was).exits++;
          } else if (list) this.enterList(id);
          else if (this.onLists.has(id)) this.listOnly--;
          door.inside.set(id, e.zone);
          this.zone(e.zone).entries++;
          if (list) list.zone(e.zone).entries++;
        }
        if (e.first) this.uniqueAttendees++;
        if (list && id) this.countEntry(list, id, e.at);
      }
    } else {
      this.countOut(e.ok);
      list?.countOut(e.ok);
      if (e.ok) {
        if (e.from) {
          this.zone(e.from).exits++;
          if (list) list.zone(e.from).exits++;
        }
        if (e.ticketId && door.inside.delete(e.ticketId)) {
          if (list) this.leaveList(e.ticketId);
          else if (this.onLists.has(e.ticketId)) this.listOnly++;
        }
      }
    }
    if (e.nonce) {
      const n: NonceResult = { ok: e.ok, reason: e.reason, ticketId: e.ticketId, seq };
      if (e.offline) {
        n.offline = true;
        if (e.conflict !== undefined) n.conflict = e.conflict;
      }
      this.nonces.set(e.nonce, n);
    }
    return patch;
  }

  /**
   * An annulment: the scan it names leaves every count it was in, and when it was the ticket's
   * latest on its door the door goes back to what the scan before it left (`restore`); an earlier
   * scan's later ones stand (pretix: the check-in is reversed and the state recomputed from the
   * rest). Decided by the annul (scanner-actor.ts) and recorded in the entry: the fold reads nothing.
   */
  private unapply(e: ScanEntry, seq: number, list: ListDoor | undefined, door: DoorTally): void {
    const x = e.annuls!;
    const id = e.ticketId!;
    this.annulled.set(x.seq, seq);
    this.annulledPrev.set(x.seq, x.prev);
    if (x.kind === 'in') {
      this.uncountIn(x);
      list?.uncountIn(x);
      this.zone(x.zone).entries--;
      if (list) list.zone(x.zone).entries--;
      // Not the latest: a later scan closed it (a check-out, or a move in a multi-entry list), and
      // that exit goes with it.
      if (!x.latest) {
        this.zone(x.zone).exits--;
        if (list) list.zone(x.zone).exits--;
      }
      if (x.none && (x.first || this.firstAnnulled.delete(id))) this.uniqueAttendees--;
      else if (x.first) this.firstAnnulled.add(id);
      if (list) this.uncountEntry(list, id, x.at);
    } else {
      // A check-out's exit stays counted: undone below when the ticket is back inside, else it
      // stands for the scan after it, which now moves the ticket on.
      this.uncountOut();
      list?.uncountOut();
    }
    if (!x.latest) return;
    if (x.prev) door.last.set(id, x.prev);
    else door.last.delete(id);
    const was = door.inside.has(id);
    if (x.restore !== null) {
      // Back inside where the entry before stands: the exit that closed it (a check-out, or the
      // move of a multi-entry list) is undone.
      this.zone(x.restore).exits--;
      if (list) list.zone(x.restore).exits--;
      door.inside.set(id, x.restore);
      if (!was) {
        if (list) this.enterList(id);
        else if (this.onLists.has(id)) this.listOnly--;
      }
    } else if (door.inside.delete(id)) {
      if (list) this.leaveList(id);
      else if (this.onLists.has(id)) this.listOnly++;
    }
  }

  private uncountEntry(list: ListDoor, id: string, at: number): void {
    const n = (list.entries.get(id) ?? 1) - 1;
    if (n > 0) list.entries.set(id, n);
    else {
      list.entries.delete(id);
      list.uniqueAttendees--;
    }
    const counts = list.days.get(localDay(at, this.timezone).day);
    const d = counts?.get(id);
    if (counts && d !== undefined) {
      if (d > 1) counts.set(id, d - 1);
      else counts.delete(id);
    }
  }

  /** Scan `seq`, or when it was annulled the one before it on its door that still stands (0: none). */
  standing(seq: number | undefined): number {
    let s = seq ?? 0;
    while (s && this.annulled.has(s)) s = this.annulledPrev.get(s) ?? 0;
    return s;
  }

  private enterList(id: string): void {
    const n = this.onLists.get(id) ?? 0;
    if (n === 0 && !this.inside.has(id)) this.listOnly++;
    this.onLists.set(id, n + 1);
  }

  private leaveList(id: string): void {
    const n = (this.onLists.get(id) ?? 1) - 1;
    if (n > 0) this.onLists.set(id, n);
    else {
      this.onLists.delete(id);
      if (!this.inside.has(id)) this.listOnly--;
    }
  }

  private countEntry(list: ListDoor, id: string, at: number): void {
    const n = (list.entries.get(id) ?? 0) + 1;
    list.entries.set(id, n);
    if (n === 1) list.uniqueAttendees++;
    const day = localDay(at, this.timezone).day;
    let counts = list.days.get(day);
    if (!counts) {
      list.days.set(day, (counts = new Map()));
      if (list.days.size > DAYS_KEPT) list.days.delete(Math.min(...list.days.keys()));
    }
    counts.set(id, (counts.get(id) ?? 0) + 1);
  }

  /** Entries of ticket `id` on `list` on the local day of `at`. */
  entriesOnDay(list: ListDoor | undefined, id: string, at: number): number {
    return list?.days.get(localDay(at, this.timezone).day)?.get(id) ?? 0;
  }

  override stats() {
    return super.stats(this.inside.size + this.listOnly);
  }
}
