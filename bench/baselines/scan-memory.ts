// The scan logic of the baselines: the same tickets (bench/fixtures/scan-dataset.ts), the same
// resolution order (dynamic QR, static code as typed / upper / lower, credential), the same rules
// and reasons, the same answer shape and size as the service, all in memory with no durability and
// no scan log. A generous baseline: it skips exactly the work that makes an answer safe to trust.
import { createHmac, timingSafeEqual } from 'node:crypto';
import jwt from 'jsonwebtoken';
import { EVENT_ID, EVENT_SLUG, JWT_SECRET, ORG, ticketRecord, ZONE } from '../fixtures/scan-dataset.js';

type Rec = ReturnType<typeof ticketRecord>;

export interface ScanBody {
  code?: unknown;
  zone?: unknown;
  eventId?: unknown;
}

export interface Answer {
  status: number;
  body: string;
}

const DYNAMIC = /^([0-9a-f]{24}):(\d{1,16}):([A-Za-z0-9_-]{43})$/;
const WINDOW_MS = 30_000;
const SKEW_MS = 60_000;

function error(status: number, message: string, name: string): Answer {
  return { status, body: JSON.stringify({ statusCode: status, message, error: name }) };
}

export class MemoryScanner {
  private readonly byId = new Map<string, Rec>();
  private readonly byNumber = new Map<string, Rec>();
  private readonly byCredential = new Map<string, Rec>();
  private readonly secrets = new Map<string, string>();
  private readonly inside = new Map<string, string>();
  private readonly zones = new Map<string, { entries: number; exits: number; attempts: number; capacity: number | null }>([
    [ZONE, { entries: 0, exits: 0, attempts: 0, capacity: 2_000_000 }],
  ]);
  private readonly tokenCache = new Map<string, { sub: string; exp: number }>();
  readonly counts = { total: 0, successful: 0, denied: 0 };

  constructor(n: number) {
    for (let i = 0; i < n; i++) {
      const t = ticketRecord(i);
      this.byId.set(t.sk, t);
      this.byNumber.set(t.data.number as string, t);
    }
  }

  /** The staff principal of `authorization` for `orgid`, verified once per token (as the edge caches it). */
  authenticate(authorization: string | undefined, orgid: string | undefined): Answer | string {
    if (orgid !== ORG) return error(400, 'the orgid header is required', 'Bad Request');
    const m = authorization ? /^Bearer\s+(\S+)\s*$/i.exec(authorization) : null;
    if (!m) return error(401, 'authentication required', 'Unauthorized');
    let p = this.tokenCache.get(m[1]);
    if (!p || p.exp * 1000 <= Date.now()) {
      try {
        const c = jwt.verify(m[1], JWT_SECRET, { algorithms: ['HS256'] }) as Record<string, any>;
        if (c.org !== ORG || c.kind !== 'staff' || !Array.isArray(c.roles) || !c.roles.includes('User')) return error(403, 'this route needs a staff token', 'Forbidden');
        p = { sub: String(c.sub), exp: Number(c.exp) };
        this.tokenCache.set(m[1], p);
      } catch {
        return error(401, 'token is invalid or expired', 'Unauthorized');
      }
    }
    return p.sub;
  }

  private byStatic(code: string): Rec | undefined {
    return this.byNumber.get(code) ?? this.byNumber.get(code.toUpperCase()) ?? this.byNumber.get(code.toLowerCase());
  }

  private resolve(code: string, at: number): { t?: Rec; reason?: string } {
    let failed: string | undefined;
    const m = DYNAMIC.exec(code);
    if (m) {
      const t = this.byId.get(m[1]);
      if (t) {
        const secret = this.secrets.get(t.sk);
        const sig = secret ? createHmac('sha256', secret).update(`${m[1]}:${m[2]}`).digest() : undefined;
        const given = Buffer.from(m[3], 'base64url');
        const ts = Number(m[2]);
        if (!sig || sig.length !== given.length || !timingSafeEqual(sig, given)) failed = 'bad_signature';
        else if (ts > at + SKEW_MS || at - ts > WINDOW_MS + SKEW_MS) failed = 'expired_code';
        else return { t };
      }
    }
    const t = this.byStatic(code) ?? this.byCredential.get(code);
    return t ? { t } : { reason: failed ?? 'invalid_code' };
  }

  /** POST /events/checkin with a parsed body, for the staff user `_by`. */
  checkIn(b: ScanBody, _by: string): Answer {
    if (typeof b.code !== 'string' || b.code.length === 0 || b.code.length > 512) return error(400, 'body/code is required', 'Bad Request');
    if (b.eventId !== undefined && b.eventId !== EVENT_ID && b.eventId !== EVENT_SLUG) return error(404, `event ${String(b.eventId)} not found`, 'Not Found');
    const zone = typeof b.zone === 'string' ? b.zone : 'unknown';
    if (b.zone !== undefined && !this.zones.has(zone)) return error(400, `body/zone "${zone}" is not a zone of event ${EVENT_ID}`, 'Bad Request');
    const now = Date.now();
    const { t, reason: unresolved } = this.resolve(b.code, now);
    let reason = unresolved;
    this.counts.total++;
    const z = this.zones.get(zone);
    if (z) z.attempts++;
    if (t) {
      const d = t.data;
      if (d.event !== EVENT_ID && d.event !== EVENT_SLUG) reason = 'wrong_event';
      else if (d.status === 'cancelled') reason = 'cancelled';
      else if (d.status === 'refunded') reason = 'refunded';
      else if (d.requiresActivation === true && !d.activatedAt) reason = 'not_active';
      else if (this.inside.has(t.sk)) reason = 'already_checked_in';
      else if (z && z.capacity !== null && z.entries - z.exits >= z.capacity) reason = 'zone_full';
    }
    if (reason !== undefined || !t) {
      this.counts.denied++;
      return { status: 200, body: JSON.stringify(t ? { success: false, reason, ticket: t } : { success: false, reason }) };
    }
    const when = new Date(now).toISOString();
    const next: Rec = {
      ...t,
      version: t.version + 1,
      state: 'checked_in',
      modifydate: when,
      data: { ...t.data, status: 'checked_in', inside: true, zone, checkedInAt: t.data.checkedInAt ?? when, lastCheckInAt: when },
    };
    this.byId.set(t.sk, next);
    this.byNumber.set(t.data.number as string, next);
    this.inside.set(t.sk, zone);
    if (z) z.entries++;
    this.counts.successful++;
    return { status: 200, body: JSON.stringify({ success: true, ticket: next }) };
  }

  stats(): string {
    return JSON.stringify({ ...this.counts, inside: this.inside.size });
  }
}

export const TICKETS = Number(process.env.SCAN_TICKETS ?? 100_000);
