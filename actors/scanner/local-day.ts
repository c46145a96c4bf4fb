// The local calendar day and ISO weekday of an instant in an event's time zone, for the entry
// rules of check-in lists (weekdays, entries per day). Every zone's offset is a multiple of 15
// minutes and changes on a 15-minute boundary, so the answer is the same for every instant of a
// 15-minute bucket: it is computed once per bucket, not once per scan.
import { toWall } from '../../core/timezone.js';

export interface LocalDay {
  /** Days since 1970-01-01 of the local date. */
  day: number;
  /** ISO weekday of the local date: 1 = Monday … 7 = Sunday. */
  weekday: number;
}

const BUCKET_MS = 15 * 60_000;
const DAY_MS = 86_400_000;
const CACHE_MAX = 4096;
const cache = new Map<string, LocalDay>();

// Scans come in runs of one event at one time: the last answer is kept apart from the cache.
let lastTz = '';
let lastBucket = NaN;
let last: LocalDay = { day: 0, weekday: 4 };

export function localDay(ms: number, tz: string): LocalDay {
  const bucket = Math.floor(ms / BUCKET_MS);
  if (bucket === lastBucket && tz === lastTz) return last;
  const key = tz + '\u0000' + bucket;
  let d = cache.get(key);
  if (!d) {
    const w = toWall(bucket * BUCKET_MS, tz);
    const day = Math.floor(Date.UTC(w.year, w.month - 1, w.day) / DAY_MS);
    // 1970-01-01 was a Thursday (ISO 4).
    d = { day, weekday: ((((day + 3) % 7) + 7) % 7) + 1 };
    if (cache.size >= CACHE_MAX) cache.clear();
    cache.set(key, d);
  }
  lastTz = tz;
  lastBucket = bucket;
  last = d;
  return d;
}
