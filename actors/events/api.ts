// The events area's API within one node: the event lookup (by id or slug, cached for the scan
// path and dropped on every event write), the calls into the events and scanner actors, the
// payments provider and the in-process gates that serialize retries of one purchase, fulfilment
// or refund. The issuing steps built on it are ./ticket-sales.ts.
import type { ActorRuntime } from '../../core/actor/runtime.js';
import type { Clock } from '../../core/clock.js';
import { appError } from '../../core/errors.js';
import { IdempotencyGate } from '../../core/idempotency.js';
import type { Logger } from '../../core/log.js';
import type { StoredRecord } from '../../core/store/record.js';
import type { Store } from '../../core/store/store.js';
import { EVENTS, EVENTS_KEY, type EventsMsg } from './messages.js';
import { LocalPayments, type PaymentsProvider } from './payments.js';
import { EVENT_MEDIA, findEvent, TICKET } from '../event-records/index.js';
import type { DeviceScope, Principal } from '../../core/auth/tokens.js';
import { customerIdsOf, provenEmailOf } from '../auth/index.js';
import { CHECKIN_LIST, locateTicket, type Located, SCANNER, type ScanEntry, type ScanInput, type ScannerMsg, UNMATCHED_SCANS } from '../scanner/index.js';

/** What the edge needs of a check-in list a scan names: its event, and its zones (null: every one). */
export interface ListTarget {
  id: string;
  eventId: string;
  zones: string[] | null;
}

/** The node's parts the events area uses (the edge passes its whole set; the type parameter keeps it). */
export interface EventsDeps {
  readonly store: Store;
  readonly runtime: ActorRuntime;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly config: { readonly store: { readonly defaultPageSize: number; readonly maxPageSize: number } };
}

const CACHE_MAX = 10_000;

/** Where the door counts an enrolled device's scans (actors/devices: noted in memory, written behind). */
export interface DoorDevices {
  scanned(tenant: string, deviceId: string, scans: number): void;
}

export class EventsApi<D extends EventsDeps = EventsDeps> {
  private readonly cache = new Map<string, StoredRecord>();
  /** Check-in lists scans named, by tenant and id: a scan naming a list reads no record. */
  private readonly listCache = new Map<string, ListTarget>();
  readonly gate = new IdempotencyGate();
  readonly payments: PaymentsProvider;

  constructor(
    readonly deps: D,
    payments?: PaymentsProvider,
    readonly devices?: DoorDevices,
  ) {
    this.payments = payments ?? new LocalPayments(deps.clock);
  }

  /** The event named by id or slug, or undefined. Cached: the scan path asks on every request. */
  findEvent(tenant: string, idOrSlug: string): StoredRecord | undefined {
    const key = tenant + '\u0000' + idOrSlug;
    const hit = this.cache.get(key);
    if (hit) return hit;
    const ev = findEvent(this.deps.store, tenant, idOrSlug);
    if (ev) {
      if (this.cache.size >= CACHE_MAX) this.cache.clear();
      this.cache.set(key, ev);
    }
    return ev;
  }

  event(tenant: string, idOrSlug: string): StoredRecord {
    const ev = this.findEvent(tenant, idOrSlug);
    if (!ev) throw appError('ERR_NOT_FOUND', `event ${idOrSlug}`);
    return ev;
  }

  /** A ticket and the id of its event (its `data.event` may be an id or a slug). */
  ticket(tenant: string, id: string): { ticket: StoredRecord; eventId: string } {
    const ticket = this.deps.store.getRecord(tenant, TICKET, id);
    const ev = ticket && typeof ticket.data.event === 'string' ? this.findEvent(tenant, ticket.data.event) : undefined;
    if (!ticket || !ev) throw appError('ERR_NOT_FOUND', `ticket ${id}`);
    return { ticket, eventId: ev.sk };
  }

  /** The check-in list `id` as a scan target, or undefined. Cached (dropped on every list write). */
  findList(tenant: string, id: string): ListTarget | undefined {
    const key = tenant + '\u0000' + id;
    const hit = this.listCache.get(key);
    if (hit) return hit;
    const rec = this.deps.store.getRecord(tenant, CHECKIN_LIST, id);
    if (!rec || typeof rec.data.event !== 'string') return undefined;
    const zones = Array.isArray(rec.data.zones) ? (rec.data.zones as string[]) : null;
    const target: ListTarget = { id, eventId: rec.data.event, zones };
    if (this.listCache.size >= CACHE_MAX) this.listCache.clear();
    this.listCache.set(key, target);
    return target;
  }

  /** After a list changed: scans read it afresh. */
  listChanged(): void {
    this.listCache.clear();
  }

  /**
   * The event a scan is for: the one it names or its list's (a list of another event than the
   * one named is a 400), else the one its ticket or code points at, with the ticket the code was
   * found to name on the way (handed to the scanner). No event: the scan names none and its code
   * matches no ticket.
   */
  scanTarget(
    tenant: string,
    ref: { eventId?: string; listId?: string; ticketId?: string; code?: string },
    at = 'body',
    device?: DeviceScope,
  ): { ev: StoredRecord | undefined; located?: Located; list?: ListTarget } {
    if (device) {
      const target = this.scanTarget(tenant, this.deviceRef(tenant, ref, device), at);
      if (target.ev) this.deviceMay(device, target.ev);
      return target;
    }
    if (ref.listId !== undefined) {
      const list = this.findList(tenant, ref.listId);
      if (!list) throw appError('ERR_NOT_FOUND', `check-in list ${ref.listId}`);
      const ev = this.event(tenant, ref.eventId ?? list.eventId);
      if (ev.sk !== list.eventId) throw appError('ERR_VALIDATION', `${at}/listId ${ref.listId} is not a check-in list of event ${ref.eventId}`);
      return { ev, list };
    }
    if (ref.eventId !== undefined) return { ev: this.event(tenant, ref.eventId) };
    let t: StoredRecord | undefined;
    let located: Located | undefined;
    if (ref.ticketId !== undefined) t = this.deps.store.getRecord(tenant, TICKET, ref.ticketId);
    else {
      const found = locateTicket(this.deps.store, tenant, ref.code ?? '');
      t = found?.ticket;
      located = found?.located;
    }
    const ev = t && typeof t.data.event === 'string' ? this.findEvent(tenant, t.data.event) : undefined;
    return ev && located ? { ev, located } : { ev };
  }

  /**
   * What an enrolled device's scan is for: its own list unless the scan names a list or another
   * event, else its one event when it has one and the scan names none (so a ticket of another
   * event is denied `wrong_event` there, not looked for elsewhere).
   */
  private deviceRef<R extends { eventId?: string; listId?: string }>(tenant: string, ref: R, device: DeviceScope): R {
    if (ref.listId !== undefined) return ref;
    if (device.listId !== undefined) {
      const list = this.findList(tenant, device.listId);
      if (ref.eventId === undefined || !list || this.findEvent(tenant, ref.eventId)?.sk === list.eventId) return { ...ref, listId: device.listId };
    }
    if (ref.eventId === undefined && device.eventIds?.length === 1) return { ...ref, eventId: device.eventIds[0] };
    return ref;
  }

  /** 403 unless `device` (a device principal's scope) was enrolled for `ev`; anyone else passes. */
  deviceMay(device: DeviceScope | undefined, ev: StoredRecord): void {
    if (device?.eventIds && !device.eventIds.includes(ev.sk)) {
      throw appError('ERR_FORBIDDEN', `scanner device ${device.id} is not enrolled for event ${ev.sk}`);
    }
  }

  /**
   * A device's scan carries the device's id (never one the client typed) and, unless it names
   * one, the device's checkpoint; it is counted to the device. Others' scans are left as sent.
   */
  stampScan(tenant: string, s: ScanInput, device: DeviceScope | undefined): ScanInput {
    if (!device) return s;
    s.device = device.id;
    if (s.checkpoint === undefined && device.checkpoint !== undefined) s.checkpoint = device.checkpoint;
    this.devices?.scanned(tenant, device.id, 1);
    return s;
  }

  /** Records a scan that matched no event (the tenant's unmatched-scans log). */
  unmatchedScan<R>(tenant: string, entry: ScanEntry): Promise<R> {
    return this.deps.runtime.ask<R>(tenant, UNMATCHED_SCANS, '_', entry);
  }

  /**
   * Whose tickets a caller holds: by holder email only once its account proved that address, and
   * by the customer ids that are its own (actors/auth/email-proof.ts).
   */
  holderOf(tenant: string, p: Principal): { email?: string; customerIds: string[] } {
    const email = provenEmailOf(this.deps.store, tenant, p);
    return { ...(email ? { email } : {}), customerIds: customerIdsOf(this.deps.store, tenant, p) };
  }

  /** Writes behind what a crash left at the door of every organisation (a single node, before it serves). */
  resumeDoors(backlog: { resume(tenants: string[]): Promise<void> }): Promise<void> {
    return backlog.resume([...this.deps.store.listOrgIds()]);
  }

  /** The media record `id`, if any. */
  mediaRecord(tenant: string, id: string): StoredRecord | undefined {
    return this.deps.store.getRecord(tenant, EVENT_MEDIA, id);
  }

  /** The media record of event `eventId` that names stored file `fileId`, if any. */
  mediaOfFile(tenant: string, eventId: string, fileId: string): StoredRecord | undefined {
    return this.deps.store.find(tenant, EVENT_MEDIA, { 'data.event': eventId, 'data.file.id': fileId }, { pageSize: 1 }).data[0];
  }

  /** The ids of the stored files the tenant's media records name. */
  mediaFileIds(tenant: string): Set<string> {
    const ids = new Set<string>();
    for (const r of this.deps.store.scan(tenant, EVENT_MEDIA)) {
      const id = (r.data.file as { id?: unknown } | undefined)?.id;
      if (typeof id === 'string') ids.add(id);
    }
    return ids;
  }

  scanner<R>(tenant: string, eventId: string, msg: ScannerMsg): Promise<R> {
    return this.deps.runtime.ask<R>(tenant, SCANNER, eventId, msg);
  }

  events<R>(tenant: string, msg: EventsMsg): Promise<R> {
    return this.deps.runtime.ask<R>(tenant, EVENTS, EVENTS_KEY, msg);
  }

  /** After an event changed: forget cached lookups and let a live scanner reread its config. */
  async eventChanged(tenant: string, eventId: string): Promise<void> {
    this.cache.clear();
    this.listCache.clear();
    if (this.deps.runtime.isLive(tenant, SCANNER, eventId)) await this.deps.runtime.ask(tenant, SCANNER, eventId, { type: 'reload' });
  }

  /** One page of an in-memory list, in the list envelope (spec: List envelope), sizes clamped as the store clamps them. */
  page<T>(items: T[], q: { page?: number; pageSize?: number }): { data: T[]; total: number; hasNext: boolean; page: number; pageSize: number } {
    const { defaultPageSize, maxPageSize } = this.deps.config.store;
    const pageSize = Math.min(q.pageSize ?? defaultPageSize, maxPageSize);
    const page = q.page ?? 1;
    const data = items.slice((page - 1) * pageSize, page * pageSize);
    return { data, total: items.length, hasNext: page * pageSize < items.length, page, pageSize };
  }

  /** Runs `fn` alone among calls with the same key in this process (retries wait for the first). */
  serialize<T>(tenant: string, key: string, fn: () => Promise<T>): Promise<T> {
    return this.gate.run(`${tenant}\u0000${key}`, fn);
  }
}

/** Oldest first, ties by id (`mine` lists newest first: the reverse). */
export function byCreated(a: StoredRecord, b: StoredRecord): number {
  return a.createdate < b.createdate ? -1 : a.createdate > b.createdate ? 1 : a.sk < b.sk ? -1 : a.sk > b.sk ? 1 : 0;
}
