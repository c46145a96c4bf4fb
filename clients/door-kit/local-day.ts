// The local calendar day and ISO weekday of an instant in an event's time zone: a list's
// `weekdays` and `maxEntriesPerDay` are the event's local days, as on the server. The platform's
// Intl data answers it, so the kit needs no time-zone table of its own.

export interface LocalDay {
  /** Days since 1970-01-01 of the local date. */
  day: number;
  /** 1 = Monday … 7 = Sunday. */
  weekday: number;
}

const formats = new Map<string, Intl.DateTimeFormat>();

function format(tz: string): Intl.DateTimeFormat {
  let f = formats.get(tz);
  if (!f) {
    try {
      f = new Intl.DateTimeFormat('en-US', { timeZone: tz, year: 'numeric', month: 'numeric', day: 'numeric' });
    } catch {
      // A zone this platform does not know: UTC, as the server does for one it does not know.
      f = new Intl.DateTimeFormat('en-US', { timeZone: 'UTC', year: 'numeric', month: 'numeric', day: 'numeric' });
    }
    formats.set(tz, f);
  }
  return f;
}

export function localDay(ms: number, tz: string): LocalDay {
  const parts = format(tz).formatToParts(new Date(ms));
  const get = (type: string) => Number(parts.find((p) => p.type === type)?.value);
  const day = Math.floor(Date.UTC(get('year'), get('month') - 1, get('day')) / 86_400_000);
  // 1970-01-01 was a Thursday (ISO 4).
  return { day, weekday: ((((day + 3) % 7) + 7) % 7) + 1 };
}
