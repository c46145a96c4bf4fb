// Scans per minute per checkpoint over the last hour: what the live door view charts. Each
// checkpoint keeps a ring of 60 one-minute buckets stamped with their minute, so a bucket an hour
// old is reused rather than kept, and memory stays flat however long the door runs. It is folded
// from the scan log with the rest of the door (door-state.ts), by the time of the scan (an offline
// scan's `scannedAt`), so a restart rebuilds the same chart.

export const RATE_MINUTES = 60;
const MINUTE_MS = 60_000;

/** Checkpoints charted at once: a checkpoint is typed by the scanner, so the set is bounded. */
export const RATE_CHECKPOINTS_MAX = 50;

class MinuteRing {
  readonly counts = new Uint32Array(RATE_MINUTES);
  /** The minute (epoch ms / 60 s) each slot counts; -1: none yet. */
  readonly stamps = new Float64Array(RATE_MINUTES).fill(-1);
  /** The latest minute counted. */
  latest = -1;

  add(minute: number): void {
    const slot = minute % RATE_MINUTES;
    const stamp = this.stamps[slot];
    if (stamp !== minute) {
      // The slot holds a later minute: this scan is more than an hour older than it.
      if (stamp > minute) return;
      this.stamps[slot] = minute;
      this.counts[slot] = 0;
    }
    this.counts[slot]++;
    if (minute > this.latest) this.latest = minute;
  }

  /** The 60 minutes ending with `last`, oldest first. */
  window(last: number): number[] {
    const out = new Array<number>(RATE_MINUTES);
    for (let i = 0; i < RATE_MINUTES; i++) {
      const m = last - (RATE_MINUTES - 1) + i;
      const slot = m % RATE_MINUTES;
      out[i] = m >= 0 && this.stamps[slot] === m ? this.counts[slot] : 0;
    }
    return out;
  }
}

export interface CheckpointRate {
  /** null: scans that named no checkpoint. */
  checkpoint: string | null;
  /** Scans in each minute, oldest first; the last is the current minute. */
  perMinute: number[];
  total: number;
}

export interface ScanRates {
  /** Start of the first minute (ISO). */
  from: string;
  minutes: number;
  checkpoints: CheckpointRate[];
}

export class ScanRate {
  /** Checkpoint ('' for none) → its ring. */
  private readonly rings = new Map<string, MinuteRing>();
  private lastKey: string | null = null;
  private last: MinuteRing | undefined;

  add(checkpoint: string | null, at: number): void {
    const k = checkpoint ?? '';
    let r = k === this.lastKey ? this.last : this.rings.get(k);
    if (!r) {
      if (this.rings.size >= RATE_CHECKPOINTS_MAX) this.evict();
      this.rings.set(k, (r = new MinuteRing()));
    }
    this.lastKey = k;
    this.last = r;
    r.add(Math.floor(at / MINUTE_MS));
  }

  /** Makes room: the checkpoint that has been quiet the longest goes. */
  private evict(): void {
    let quiet: string | undefined;
    let oldest = Infinity;
    for (const [k, r] of this.rings) {
      if (r.latest < oldest) {
        oldest = r.latest;
        quiet = k;
      }
    }
    if (quiet === undefined) return;
    this.rings.delete(quiet);
    if (this.lastKey === quiet) {
      this.lastKey = null;
      this.last = undefined;
    }
  }

  /** The hour ending with the minute of `now`: checkpoints with a scan in it, busiest first. */
  window(now: number): ScanRates {
    const last = Math.floor(now / MINUTE_MS);
    const checkpoints: CheckpointRate[] = [];
    for (const [k, r] of this.rings) {
      if (r.latest < last - (RATE_MINUTES - 1)) continue;
      const perMinute = r.window(last);
      const total = perMinute.reduce((a, b) => a + b, 0);
      if (total > 0) checkpoints.push({ checkpoint: k === '' ? null : k, perMinute, total });
    }
    checkpoints.sort((a, b) => b.total - a.total || ((a.checkpoint ?? '') < (b.checkpoint ?? '') ? -1 : 1));
    return { from: new Date((last - (RATE_MINUTES - 1)) * MINUTE_MS).toISOString(), minutes: RATE_MINUTES, checkpoints };
  }
}
