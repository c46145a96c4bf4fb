// The live door views open on this node, by event: one bus subscription per watched event, and
// one snapshot per change shared by every view of it. A scanner publishes `door.<tenant>.<event>`
// after a scan commits, at most once per DOOR_NOTICE_MS (actors/scanner/door-view.ts); this node
// reads the door COALESCE_MS after a notice, which is never sooner than the scanner's next notice
// could come, so a scan whose own notice was skipped is in that read or in the one after it. A
// notice that arrives while a read is already due asks for one more read COALESCE_MS after it: a
// rush gives each view at most a few snapshots a second, and the last scan is always shown.
// The bus is in-process on one server and NATS in a cluster, so a view on another node than the
// event's scanner is told all the same.
import { DOOR_NOTICE_MS, doorScannedSubject } from '../../../actors/scanner/index.js';
import type { Bus, Unsubscribe } from '../../../core/bus/bus.js';
import { appError } from '../../../core/errors.js';
import type { Logger } from '../../../core/log.js';

/** How long after a notice the door is read (≥ DOOR_NOTICE_MS, see above). */
export const COALESCE_MS = DOOR_NOTICE_MS + 50;

/** One open view: `send` gets each snapshot newer than the last it got. */
interface Viewer {
  send(frame: string): void;
  /** The generation of the last snapshot sent to it. */
  seen: number;
}

interface Watched {
  readonly viewers: Set<Viewer>;
  unsubscribe: Unsubscribe;
  timer: ReturnType<typeof setTimeout> | null;
  /** A notice came while a read was due: read once more after it. */
  again: boolean;
  /** Generation of the latest read asked. */
  asked: number;
}

export interface DoorWatchLimits {
  /** Views open on this node at once. */
  total: number;
  /** Views one organisation may hold open on this node. */
  perOrg: number;
}

/** Reads the door of an event and answers the frame to send (`event: door` …). */
export type DoorSnapshot = (tenant: string, eventId: string) => Promise<string>;

export class DoorWatch {
  private readonly watched = new Map<string, Watched>();
  private open = 0;
  private readonly byOrg = new Map<string, number>();

  constructor(
    private readonly bus: Bus,
    private readonly log: Logger,
    private readonly snapshot: DoorSnapshot,
    private readonly limits: () => DoorWatchLimits,
  ) {}

  /** Views open now (all, or one organisation's). */
  count(tenant?: string): number {
    return tenant === undefined ? this.open : (this.byOrg.get(tenant) ?? 0);
  }

  /**
   * Reserves a place for a view of `tenant`, or refuses with 503 (the node's bound) or 429 (the
   * organisation's). Answers the release, which is idempotent.
   */
  admit(tenant: string): () => void {
    const { total, perOrg } = this.limits();
    if (this.open >= total) throw appError('ERR_UNAVAILABLE', `this server has ${this.open} live door views open, the most DOOR_VIEW_STREAMS allows; retry later`);
    const mine = this.byOrg.get(tenant) ?? 0;
    if (mine >= perOrg) throw appError('ERR_TOO_MANY_STREAMS', mine, 'DOOR_VIEW_STREAMS_PER_ORG');
    this.open++;
    this.byOrg.set(tenant, mine + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.open--;
      const n = (this.byOrg.get(tenant) ?? 1) - 1;
      if (n > 0) this.byOrg.set(tenant, n);
      else this.byOrg.delete(tenant);
    };
  }

  /** Sends the door now and after every change until the answer is called. */
  watch(tenant: string, eventId: string, send: (frame: string) => void): () => void {
    const key = `${tenant}\n${eventId}`;
    let w = this.watched.get(key);
    if (!w) {
      const created: Watched = { viewers: new Set(), unsubscribe: () => undefined, timer: null, again: false, asked: 0 };
      created.unsubscribe = this.bus.subscribe(doorScannedSubject(tenant, eventId), () => this.noticed(tenant, eventId, created));
      this.watched.set(key, (w = created));
    }
    const viewer: Viewer = { send, seen: 0 };
    w.viewers.add(viewer);
    const watched = w;
    this.read(tenant, eventId, watched, viewer);
    return () => {
      watched.viewers.delete(viewer);
      if (watched.viewers.size > 0 || this.watched.get(key) !== watched) return;
      this.watched.delete(key);
      watched.unsubscribe();
      if (watched.timer) clearTimeout(watched.timer);
      watched.timer = null;
    };
  }

  private noticed(tenant: string, eventId: string, w: Watched): void {
    if (w.viewers.size === 0) return;
    if (w.timer) {
      w.again = true;
      return;
    }
    this.arm(tenant, eventId, w);
  }

  private arm(tenant: string, eventId: string, w: Watched): void {
    w.timer = setTimeout(() => {
      w.timer = null;
      if (w.viewers.size === 0) return;
      if (w.again) {
        w.again = false;
        this.arm(tenant, eventId, w);
      }
      this.read(tenant, eventId, w);
    }, COALESCE_MS);
    w.timer.unref?.();
  }

  /** Reads the door; the snapshot goes to `only`, or to every view that has an older one. */
  private read(tenant: string, eventId: string, w: Watched, only?: Viewer): void {
    const gen = ++w.asked;
    this.snapshot(tenant, eventId).then(
      (frame) => {
        for (const v of only ? [only] : w.viewers) {
          // A later read already reached it (answers may cross).
          if (v.seen >= gen || !w.viewers.has(v)) continue;
          v.seen = gen;
          v.send(frame);
        }
      },
      (err: unknown) => this.log.warn({ err, tenant, eventId }, 'door view: the door could not be read'),
    );
  }
}
