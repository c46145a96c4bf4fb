// The node-wide free-disk floor (issue 29): below it, writes answer 507 instead of failing inside
// LMDB (or leaving half a media file), and deletes still run so an operator can make room. The free
// space is read with statfs on a timer, so a write only reads a flag; a write of a known size (a
// media file) is measured against the last reading plus its own bytes.
import { statfs, statfsSync } from 'node:fs';
import { AppError } from '../errors.js';

/** How often the free space is read again. */
const POLL_MS = 1000;

export class DiskFloor {
  private free = Number.POSITIVE_INFINITY;
  private timer: NodeJS.Timeout | undefined;

  /** `minFreeBytes` 0 turns the floor off. */
  constructor(
    private readonly path: string,
    readonly minFreeBytes: number,
  ) {
    if (minFreeBytes <= 0) return;
    this.free = freeOf(statfsSync(path));
    this.timer = setInterval(() => this.read(), POLL_MS);
    this.timer.unref();
  }

  private read(): void {
    statfs(this.path, (err, s) => {
      // An unreadable filesystem keeps the last reading: the write itself reports a real failure.
      if (!err) this.free = freeOf(s);
    });
  }

  /** Bytes free for an unprivileged writer at the last reading. */
  get freeBytes(): number {
    return this.free;
  }

  /** Below the floor now (a write that adds `bytes` would be). */
  low(bytes = 0): boolean {
    return this.free - bytes < this.minFreeBytes;
  }

  /** ERR_INSUFFICIENT_STORAGE (507) when a write of `bytes` would go below the floor. */
  assertRoom(bytes = 0): void {
    if (this.low(bytes)) throw new AppError('ERR_INSUFFICIENT_STORAGE', [Math.max(0, this.free), this.minFreeBytes]);
  }

  close(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }
}

function freeOf(s: { bavail: number | bigint; bsize: number | bigint }): number {
  return Number(s.bavail) * Number(s.bsize);
}
