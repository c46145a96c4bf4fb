// Wall-clock time in an IANA zone ↔ UTC instants, with Intl.DateTimeFormat only (no tz database
// of our own). Reservation definitions and locations keep their hours as wall-clock times in their
// zone; bookings store UTC instants. A DST change day is the case to get right: a wall time inside
// the spring-forward gap does not exist, and one inside the autumn repeat exists twice.
//
// Dates are `YYYY-MM-DD` strings and times `HH:mm` (or `HH:mm:ss`, `24:00` = next midnight);
// instants are epoch milliseconds.

const DAY_MS = 86_400_000;

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(tz: string): Intl.DateTimeFormat {
  let f = formatters.get(tz);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: tz,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    });
    if (formatters.size > 500) formatters.clear();
    formatters.set(tz, f);
  }
  return f;
}

/** True when `tz` names a zone this runtime knows (`UTC`, `Europe/Berlin`, ...). */
export function isValidTimeZone(tz: unknown): tz is string {
  if (typeof tz !== 'string' || tz.length === 0 || tz.length > 64) return false;
  try {
    formatter(tz);
    return true;
  } catch {
    return false;
  }
}

export interface WallTime {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
}

/** The wall-clock reading in `tz` at instant `ms` (seconds precision). */
export function toWall(ms: number, tz: string): WallTime {
  const w: WallTime = { year: 0, month: 0, day: 0, hour: 0, minute: 0, second: 0 };
  for (const p of formatter(tz).formatToParts(ms)) {
    switch (p.type) {
      case 'year':
        w.year = Number(p.value);
        break;
      case 'month':
        w.month = Number(p.value);
        break;
      case 'day':
        w.day = Number(p.value);
        break;
      case 'hour':
        // Some ICU builds still say 24 at midnight despite h23.
        w.hour = Number(p.value) % 24;
        break;
      case 'minute':
        w.minute = Number(p.value);
        break;
      case 'second':
        w.second = Number(p.value);
        break;
    }
  }
  return w;
}

/** The zone's offset from UTC at instant `ms`, in milliseconds (Berlin in summer: +7,200,000). */
export function offsetMs(ms: number, tz: string): number {
  const whole = ms - (((ms % 1000) + 1000) % 1000);
  const w = toWall(whole, tz);
  return Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute, w.second) - whole;
}

const DATE_RE = /^(\d{4})-(\d{2})-(\d{2})$/;
const TIME_RE = /^([01]\d|2[0-4]):([0-5]\d)(?::([0-5]\d))?$/;

/** `YYYY-MM-DD` of a real calendar date, else undefined. */
export function parseDate(s: unknown): { year: number; month: number; day: number } | undefined {
  if (typeof s !== 'string') return undefined;
  const m = DATE_RE.exec(s);
  if (!m) return undefined;
  const year = Number(m[1]);
  const month = Number(m[2]);
  const day = Number(m[3]);
  const d = new Date(Date.UTC(year, month - 1, day));
  if (d.getUTCFullYear() !== year || d.getUTCMonth() !== month - 1 || d.getUTCDate() !== day) return undefined;
  return { year, month, day };
}

export function isDate(s: unknown): s is string {
  return parseDate(s) !== undefined;
}

/** Minutes since midnight of `HH:mm` / `HH:mm:ss` (`24:00` = 1440), else undefined. */
export function parseTime(s: unknown): number | undefined {
  if (typeof s !== 'string') return undefined;
  const m = TIME_RE.exec(s);
  if (!m) return undefined;
  const h = Number(m[1]);
  const min = Number(m[2]);
  const sec = Number(m[3] ?? 0);
  if (h === 24 && (min !== 0 || sec !== 0)) return undefined;
  return h * 60 + min + sec / 60;
}

/** The date `n` days after `date` (n may be negative). */
export function addDays(date: string, n: number): string {
  const d = parseDate(date);
  if (!d) throw new RangeError(`not a date: ${date}`);
  return new Date(Date.UTC(d.year, d.month - 1, d.day) + n * DAY_MS).toISOString().slice(0, 10);
}

/** Day of the week of a calendar date: 0 = Sunday … 6 = Saturday (zone-independent). */
export function weekday(date: string): number {
  const d = parseDate(date);
  if (!d) throw new RangeError(`not a date: ${date}`);
  return new Date(Date.UTC(d.year, d.month - 1, d.day)).getUTCDay();
}

export interface WallToUtcOptions {
  /**
   * A wall time inside a spring-forward gap does not exist: `skip` answers undefined, `forward`
   * (default) moves it forward by the gap's length (02:30 in Berlin on 2026-03-29 → 03:30 CEST).
   */
  gap?: 'skip' | 'forward';
  /** A wall time inside an autumn repeat exists twice: `earlier` (default) or `later` occurrence. */
  fold?: 'earlier' | 'later';
}

/**
 * The UTC instant at which the wall clock in `tz` shows `minutes` after midnight of `date`
 * (`minutes` may exceed 1440 for times past midnight of the next day).
 */
export function wallMinutesToUtc(date: string, minutes: number, tz: string, opts: WallToUtcOptions = {}): number | undefined {
  const d = parseDate(date);
  if (!d) return undefined;
  const wall = Date.UTC(d.year, d.month - 1, d.day) + Math.round(minutes * 60_000);
  // The true instant lies within ±14 h of `wall`; the offsets a day either side cover both sides of
  // (at most) one transition near it.
  const before = offsetMs(wall - DAY_MS, tz);
  const after = offsetMs(wall + DAY_MS, tz);
  const valid: number[] = [];
  for (const o of before === after ? [before] : [before, after]) {
    const t = wall - o;
    if (offsetMs(t, tz) === o) valid.push(t);
  }
  if (valid.length === 0) {
    // In the gap: the offset in force before it, applied to the missing wall time, lands the same
    // distance past the transition (the clock's reading moved forward by the gap).
    if (opts.gap === 'skip') return undefined;
    return wall - before;
  }
  valid.sort((a, b) => a - b);
  return opts.fold === 'later' ? valid[valid.length - 1] : valid[0];
}

/** `wallMinutesToUtc` with a `HH:mm` time. */
export function wallToUtc(date: string, time: string, tz: string, opts: WallToUtcOptions = {}): number | undefined {
  const minutes = parseTime(time);
  if (minutes === undefined) return undefined;
  return wallMinutesToUtc(date, minutes, tz, opts);
}

/** True when the wall time exists in `tz` on `date` (false inside a spring-forward gap). */
export function wallTimeExists(date: string, minutes: number, tz: string): boolean {
  return wallMinutesToUtc(date, minutes, tz, { gap: 'skip' }) !== undefined;
}

function pad(n: number, width = 2): string {
  return String(n).padStart(width, '0');
}

/** The calendar date in `tz` at instant `ms`. */
export function localDate(ms: number, tz: string): string {
  const w = toWall(ms, tz);
  return `${pad(w.year, 4)}-${pad(w.month)}-${pad(w.day)}`;
}

/** The wall-clock `HH:mm` in `tz` at instant `ms`. */
export function localTime(ms: number, tz: string): string {
  const w = toWall(ms, tz);
  return `${pad(w.hour)}:${pad(w.minute)}`;
}

/** `YYYY-MM-DDTHH:mm:ss` wall-clock reading in `tz` (no zone designator). */
export function localDateTime(ms: number, tz: string): string {
  const w = toWall(ms, tz);
  return `${pad(w.year, 4)}-${pad(w.month)}-${pad(w.day)}T${pad(w.hour)}:${pad(w.minute)}:${pad(w.second)}`;
}

/** [start, end) of the calendar day `date` in `tz` as UTC instants (23 or 25 hours on DST days). */
export function dayRange(date: string, tz: string): [number, number] {
  const start = wallMinutesToUtc(date, 0, tz);
  const end = wallMinutesToUtc(addDays(date, 1), 0, tz);
  if (start === undefined || end === undefined) throw new RangeError(`not a date: ${date}`);
  return [start, end];
}

const ZONED = /(?:[zZ]|[+-]\d{2}(?::?\d{2})?)$/;
const LOCAL_DT = /^(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?)$/;

/** True when `s` is a date-time with no zone designator (`2026-03-29T10:00`). */
export function isZoneless(s: string): boolean {
  return LOCAL_DT.test(s);
}

/**
 * An instant from a client or a stored record: an ISO 8601 date-time with `Z` or an offset is taken
 * as is; a zone-less date-time (older records, or a client sending wall-clock time) is read as
 * wall-clock time in `tz` (a gap time moves forward, a repeated one takes its first occurrence).
 * Anything else is undefined.
 */
export function parseInstant(value: unknown, tz: string): number | undefined {
  if (typeof value !== 'string' || value.length > 40) return undefined;
  const s = value.trim();
  const local = LOCAL_DT.exec(s);
  if (local) {
    const [hh, mm, rest] = local[2].split(':');
    const seconds = rest ? Number(rest) : 0;
    if (Number(hh) > 23 || Number(mm) > 59 || seconds >= 60) return undefined;
    return wallMinutesToUtc(local[1], Number(hh) * 60 + Number(mm) + seconds / 60, tz);
  }
  if (!ZONED.test(s) || !/^\d{4}-\d{2}-\d{2}T/.test(s)) return undefined;
  const ms = Date.parse(s);
  return Number.isNaN(ms) ? undefined : ms;
}
