// The door kit a scanner app embeds: enrol once with an initialization token, sync the door keys
// and ticket feed of the device's events while the network is there, decide every scan locally
// (the same answer with or without a network), queue it, and upload the queue when the server
// can be reached. The server keeps what the device decided and reports a conflict when the
// ticket had already entered elsewhere; the kit collects those conflicts for the app.
import { randomUUID } from 'node:crypto';
import { DoorClient, KitHttpError, KitOfflineError, type Fetch, type Initialized, type UploadItem } from './client.js';
import { LocalDoor, type LocalEntry } from './door-state.js';
import { applyPage, emptyView, type EventView } from './event-view.js';
import { localDay } from './local-day.js';
import { ScanQueue } from './queue.js';
import { refusal, resolveCode } from './rules.js';
import { MemoryStorage, type KitStorage } from './storage.js';
import type { Decision, DenialReason, FeedList } from './types.js';

export interface DoorKitOptions {
  baseUrl: string;
  orgId: string;
  storage?: KitStorage;
  fetch?: Fetch;
  /** The clock scans are stamped and decided with (default Date.now). */
  now?: () => number;
  /** Tickets per feed page (1..1000, default 500). */
  feedPageSize?: number;
  timeoutMs?: number;
}

export interface DeviceInfo {
  deviceId: string;
  token: string;
  /** null: every event of the organisation (name them to `sync`). */
  eventIds: string[] | null;
  listId: string | null;
  checkpoint: string | null;
}

export interface ScanInput {
  code: string;
  /** Default: the only event synced. */
  eventId?: string;
  /**
   * Default: the device's list when it is a list of the scan's event, else the event's own door
   * (as the server stamps a device's scans: a scan of the device's event always names a list).
   */
  listId?: string;
  zone?: string;
  checkpoint?: string;
}

export interface Conflict {
  nonce: string;
  eventId: string;
  ticketId: string | null;
  scannedAt: string;
  conflictReason: string;
}

export interface UploadReport {
  /** Scans the server took (conflicts included). */
  uploaded: number;
  /** Conflicts the server reported in this upload. */
  conflicts: Conflict[];
  /** Scans the server refused in their slot (never sent again): nonce and the error message. */
  rejected: Array<{ nonce: string; message: string }>;
  /** Still queued: the network failed before the queue emptied. */
  left: number;
  offline: boolean;
}

interface DoorSnapshot {
  queue: UploadItem[];
  entries: LocalEntry[];
  conflicts: Conflict[];
}

const DEVICE_KEY = 'device';
const DOOR_KEY = 'door';
const eventKey = (id: string) => `event:${id}`;

export class DoorKit {
  private readonly client: DoorClient;
  private readonly storage: KitStorage;
  private readonly now: () => number;
  private readonly views = new Map<string, EventView>();
  private device_: DeviceInfo | undefined;
  private queue = new ScanQueue();
  private door = new LocalDoor();
  private conflicts_: Conflict[] = [];
  /** Uploads run one at a time: a second call waits for the first. */
  private uploading: Promise<UploadReport> | undefined;

  private constructor(private readonly opts: DoorKitOptions) {
    this.client = new DoorClient({ baseUrl: opts.baseUrl, orgId: opts.orgId, fetch: opts.fetch, timeoutMs: opts.timeoutMs });
    this.storage = opts.storage ?? new MemoryStorage();
    this.now = opts.now ?? Date.now;
  }

  /** A kit with what its storage kept (device, synced events, queue, door memory, conflicts). */
  static async open(opts: DoorKitOptions): Promise<DoorKit> {
    const kit = new DoorKit(opts);
    const device = await kit.storage.get<DeviceInfo>(DEVICE_KEY);
    if (device) kit.setDevice(device);
    const door = await kit.storage.get<DoorSnapshot>(DOOR_KEY);
    if (door) {
      kit.queue = new ScanQueue(door.queue);
      kit.door = new LocalDoor(door.entries);
      kit.conflicts_ = door.conflicts;
    }
    for (const id of (await kit.storage.get<string[]>('events')) ?? []) {
      const v = await kit.storage.get<EventView>(eventKey(id));
      if (v) kit.views.set(id, v);
    }
    return kit;
  }

  get device(): DeviceInfo | undefined {
    return this.device_;
  }

  /** Scans not uploaded yet. */
  get queued(): number {
    return this.queue.size;
  }

  /** Every conflict the server reported for this kit's scans, oldest first. */
  get conflicts(): readonly Conflict[] {
    return this.conflicts_;
  }

  /** The synced view of an event (settings, lists, tickets), as the kit decides with it. */
  view(eventId: string): EventView | undefined {
    return this.views.get(eventId);
  }

  private setDevice(d: DeviceInfo): void {
    this.device_ = d;
    this.client.token = d.token;
  }

  /** Trades the initialization token an Admin handed over for the device token, and keeps it. */
  async enrol(initToken: string, hardwareId?: string): Promise<DeviceInfo> {
    const r: Initialized = await this.client.initialize(initToken, hardwareId);
    const d: DeviceInfo = { deviceId: r.deviceId, token: r.token, eventIds: r.device.eventIds, listId: r.device.listId, checkpoint: r.device.checkpoint };
    await this.storage.set(DEVICE_KEY, d);
    this.setDevice(d);
    return d;
  }

  /**
   * Brings the keys and the feed of each event up to date: the whole feed on the first sync
   * (paged, resumable: every page is kept with its cursor), then only what changed since the
   * saved cursor. Throws KitOfflineError with no network; what was synced before stays.
   */
  async sync(eventIds?: string[]): Promise<void> {
    const ids = eventIds ?? this.device_?.eventIds ?? [...this.views.keys()];
    if (!this.device_) throw new Error('door kit: enrol the device first');
    if (ids.length === 0) throw new Error('door kit: the device may scan at every event: name the events to sync');
    for (const id of ids) await this.syncEvent(id);
  }

  private async syncEvent(eventId: string): Promise<void> {
    const keys = await this.client.doorKeys(eventId);
    let view = this.views.get(eventId);
    // Entries uploaded before this sync: a page carrying their ticket counts them now.
    const settled = this.door.uploadedNonces();
    let since = view ? (view.pending ?? view.cursor) : null;
    const limit = Math.max(1, Math.min(1000, this.opts.feedPageSize ?? 500));
    for (let pages = 0; ; pages++) {
      const page = await this.client.doorFeed(eventId, since, limit);
      const first = since === null;
      if (!view || first) view = { ...emptyView(page.event), version: (view?.version ?? 0) + 1 };
      applyPage(view, page, first);
      view.keys = keys;
      for (const t of page.tickets) this.door.settle(eventId, t.id, settled);
      if (page.complete) {
        view.cursor = page.cursor;
        view.pending = null;
        view.syncedAt = new Date(this.now()).toISOString();
      } else {
        if (page.cursor === since || pages > 100_000) throw new KitHttpError(502, { message: 'the door feed did not move on' });
        view.pending = page.cursor;
      }
      this.views.set(eventId, view);
      await this.storage.set(eventKey(eventId), view);
      await this.storage.set('events', [...this.views.keys()]);
      if (page.complete) break;
      since = page.cursor;
    }
    await this.saveDoor();
  }

  /** Decides a scan with what the kit has (no network needed), records it and queues it for upload. */
  async scan(input: ScanInput): Promise<Decision> {
    const d = this.decide(input);
    const item: UploadItem = { code: input.code, eventId: d.eventId, nonce: d.nonce, scannedAt: d.scannedAt, offline: true, decision: d.admitted ? 'admitted' : 'denied' };
    if (d.listId !== null) item.listId = d.listId;
    if (input.zone !== undefined) item.zone = input.zone;
    const checkpoint = input.checkpoint ?? this.device_?.checkpoint ?? undefined;
    if (checkpoint !== undefined) item.checkpoint = checkpoint;
    if (d.reason) item.reason = d.reason;
    this.queue.push(item);
    if (d.admitted && d.ticket) {
      const view = this.views.get(d.eventId)!;
      const at = Date.parse(d.scannedAt);
      this.door.add({ nonce: d.nonce, ticketId: d.ticket.id, eventId: d.eventId, listId: d.listId, at, day: localDay(at, view.event.timezone).day, uploaded: false });
    }
    await this.saveDoor();
    return d;
  }

  /** The decision alone: nothing is recorded or queued (a "check" button). */
  decide(input: ScanInput): Decision {
    const eventId = input.eventId ?? this.defaultEvent();
    const view = this.views.get(eventId);
    if (!view) throw new Error(`door kit: event ${eventId} is not synced`);
    const own = this.device_?.listId;
    const listId = input.listId ?? (own && view.lists[own] ? own : null);
    let list: FeedList | undefined;
    if (listId !== null) {
      list = view.lists[listId];
      if (!list) throw new Error(`door kit: ${listId} is not a check-in list of event ${eventId}`);
      if (input.zone !== undefined && list.zones && !list.zones.includes(input.zone)) throw new Error(`door kit: zone ${input.zone} is not a zone of list ${listId}`);
    }
    const at = this.now();
    const base = { eventId, listId, nonce: randomUUID(), scannedAt: new Date(at).toISOString() };
    const others = [...this.views.values()].filter((v) => v !== view);
    const r = resolveCode(view, others, input.code, at);
    if (!r.ticket) return { ...base, admitted: false, reason: r.reason ?? 'invalid_code' };
    let reason: DenialReason | undefined = r.eventId !== eventId ? 'wrong_event' : refusal(view, this.door, list, r.ticket, at);
    return reason ? { ...base, admitted: false, reason, ticket: r.ticket } : { ...base, admitted: true, ticket: r.ticket };
  }

  private defaultEvent(): string {
    if (this.views.size === 1) return this.views.keys().next().value!;
    if (this.device_?.eventIds?.length === 1) return this.device_.eventIds[0];
    throw new Error('door kit: name the event of the scan (the kit has several or none synced)');
  }

  /**
   * Uploads the queue in batches of at most 500, oldest first. A batch the network lost is sent
   * again next time with the same nonces. Answers what the server took, the conflicts it
   * reported, and scans it refused in their slot (a malformed scan: dropped, never retried).
   * With no network it answers `offline: true` and keeps the queue.
   */
  upload(): Promise<UploadReport> {
    this.uploading ??= this.uploadAll().finally(() => (this.uploading = undefined));
    return this.uploading;
  }

  private async uploadAll(): Promise<UploadReport> {
    const report: UploadReport = { uploaded: 0, conflicts: [], rejected: [], left: this.queue.size, offline: false };
    while (this.queue.size > 0) {
      const batch = this.queue.head();
      let results;
      try {
        results = (await this.client.uploadBatch(batch)).results;
      } catch (err) {
        if (err instanceof KitOfflineError) {
          report.offline = true;
          break;
        }
        throw err;
      }
      const done = new Set<string>();
      batch.forEach((item, i) => {
        const r = results[i];
        if (!r) return;
        done.add(item.nonce);
        if ('error' in r) {
          report.rejected.push({ nonce: item.nonce, message: r.error.message });
          return;
        }
        report.uploaded++;
        if (r.conflict) {
          const c: Conflict = { nonce: item.nonce, eventId: item.eventId, ticketId: r.ticketId ?? r.ticket?.sk ?? this.door.ticketOf(item.nonce) ?? null, scannedAt: item.scannedAt, conflictReason: r.conflictReason ?? 'conflict' };
          report.conflicts.push(c);
          this.conflicts_.push(c);
        }
      });
      if (done.size === 0) throw new KitHttpError(502, { message: 'the batch upload answered no result' });
      this.queue.remove(done);
      this.door.markUploaded(done);
      await this.saveDoor();
    }
    report.left = this.queue.size;
    return report;
  }

  private saveDoor(): Promise<void> {
    const snap: DoorSnapshot = { queue: this.queue.toJSON(), entries: this.door.toJSON(), conflicts: this.conflicts_ };
    return this.storage.set(DOOR_KEY, snap);
  }
}
