// Door scanning (spec: Endpoints → Events, payload rules 1 and 2; Derived shapes). A scan is one
// message to its event's scanner actor; the answer comes back once the scan log entry is committed
// (the ticket record learns its new status behind, see actors/scanner/door-backlog.ts). A denial is
// a 200 with `success: false` and a reason. A code is resolved once: by the scanner, or here when
// the scan names no event (the ticket found is handed on, not looked up again).
import type { AppDeps } from '../../deps.js';
import { appError } from '../../../core/errors.js';
import type { StoredRecord } from '../../../core/store/record.js';
import { DEFAULT_CODE_SKEW_SECONDS } from '../../../actors/event-records/index.js';
import { type CheckinStats as Stats, type ZoneOccupancy as ZoneOcc, type Located, scanEntry, type ScanInput, type ScanReply, type ValidateReply } from '../../../actors/scanner/index.js';
import { doorFree } from './door-wait.js';
import { route, type RouteDef } from '../../route.js';
import {
  BatchBody,
  BatchResult,
  CheckinBody,
  CheckinStats,
  CheckoutBody,
  EventParams,
  Occupancy,
  REASONS_DOC,
  ScanResult,
  ValidateBody,
  ValidateResult,
} from './schemas.js';
import type { EventsApi } from '../../../actors/events/index.js';

const TAG = 'Check-in scanning';

interface ScanBody {
  code?: string;
  ticketId?: string;
  zone?: string;
  checkpoint?: string;
  eventId?: string;
  nonce?: string;
  scannedAt?: string;
  deviceId?: string;
}

interface Target {
  /** Undefined: the scan names no event and its code matches no ticket. */
  ev: StoredRecord | undefined;
  /** The ticket the code was found to name on the way (handed to the scanner). */
  located?: Located;
}

/** Checks what only the event can tell (its zones, its clock-skew tolerance) and builds the input. */
function scanInput(svc: EventsApi<AppDeps>, ev: StoredRecord | undefined, b: ScanBody, at: string): ScanInput {
  if (b.zone !== undefined && ev) {
    const zones = Array.isArray(ev.data.zones) ? (ev.data.zones as Array<{ id: string }>) : [];
    if (!zones.some((z) => z.id === b.zone)) throw appError('ERR_VALIDATION', `${at}/zone "${b.zone}" is not a zone of event ${ev.sk}`);
  }
  const s: ScanInput = { code: b.code, ticketId: b.ticketId, zone: b.zone, checkpoint: b.checkpoint, nonce: b.nonce, device: b.deviceId };
  if (b.scannedAt !== undefined) {
    const ms = Date.parse(b.scannedAt);
    const skew = 1000 * (typeof ev?.data.codeSkewSeconds === 'number' ? ev.data.codeSkewSeconds : DEFAULT_CODE_SKEW_SECONDS);
    if (ms > svc.deps.clock.now() + skew) throw appError('ERR_VALIDATION', `${at}/scannedAt is in the future beyond the clock-skew tolerance`);
    s.scannedAt = ms;
  }
  return s;
}

function unmatched(svc: EventsApi<AppDeps>, tenant: string, kind: 'in' | 'out', s: ScanInput, by: string | null): Promise<ScanReply> {
  const e = scanEntry(kind, s, by, svc.deps.clock.now());
  e.reason = 'invalid_code';
  if (s.code !== undefined) e.code = s.code.slice(0, 256);
  return svc.unmatchedScan<ScanReply>(tenant, e);
}

function scan(svc: EventsApi<AppDeps>, tenant: string, kind: 'in' | 'out', b: ScanBody, by: string | null): Promise<ScanReply> {
  const { ev, located }: Target = svc.scanTarget(tenant, b);
  const s = scanInput(svc, ev, b, 'body');
  if (!ev) return unmatched(svc, tenant, kind, s, by);
  if (located) s.located = located;
  return svc.scanner<ScanReply>(tenant, ev.sk, { type: kind, by, ...s });
}

export function scanningRoutes(svc: EventsApi<AppDeps>): RouteDef[] {
  return [
    doorFree(route({
      method: 'POST',
      path: '/events/checkin',
      auth: 'staff',
      tag: TAG,
      summary: 'Check a ticket in at the door',
      description:
        'Resolves `code` as a dynamic QR payload `ticketId:timestamp:signature`, then as a ticket number (as typed, ' +
        'upper-cased, lower-cased), then as a credential code, and lets the ticket in when it may enter: its status ' +
        'becomes `checked_in` and the zone counts it. Two gates scanning one ticket at once get exactly one success. ' +
        'Every scan is logged, and the answer is sent only once the scan is durable: its log entry is its one write, and ' +
        'the ticket record learns its door fields behind, in batches (`DOOR_MATERIALIZE_MS`, `DOOR_MATERIALIZE_BATCH`) that ' +
        'wait while the server is busy (`DOOR_MATERIALIZE_BUSY_PERCENT`, `DOOR_MATERIALIZE_MAX_WAIT_MS`); every ' +
        'read of tickets waits for the fields of scans already answered, so it never shows an older door state. Send `eventId`: a code that ' +
        'matches no ticket then counts in that event\'s stats (`total`, `denied`, `byZone`, `byHour`); without it, ' +
        'such a scan names no event and is logged for the organisation only. ' +
        REASONS_DOC,
      body: CheckinBody,
      response: ScanResult,
      errors: [404],
      handler: (ctx) => scan(svc, ctx.tenant, 'in', ctx.body, ctx.principal!.sub),
    })),

    doorFree(route({
      method: 'POST',
      path: '/events/checkout',
      auth: 'staff',
      tag: TAG,
      summary: 'Check a ticket out',
      description:
        'By `code` (resolved as for check-in) or `ticketId`. The ticket must be inside (`not_checked_in` otherwise); its ' +
        'status stays `checked_in` and its zone counts one exit. With re-entry on it may enter again. ' +
        REASONS_DOC,
      body: CheckoutBody,
      response: ScanResult,
      errors: [404],
      handler: (ctx) => {
        if (ctx.body.code === undefined && ctx.body.ticketId === undefined) throw appError('ERR_VALIDATION', 'body/code or body/ticketId is required');
        return scan(svc, ctx.tenant, 'out', ctx.body, ctx.principal!.sub);
      },
    })),

    doorFree(route({
      method: 'POST',
      path: '/events/checkin/batch',
      auth: 'staff',
      tag: TAG,
      summary: 'Upload scans made offline (up to 500)',
      description:
        'Each scan is `{code | ticketId, direction?: "in" | "out", zone?, checkpoint?, eventId?, nonce?, scannedAt?}`; ' +
        'results come back in the same order, each in the check-in answer shape. Send a `nonce` with every offline scan: a ' +
        'retried upload answers the original results and counts nothing twice. Scans of one event are decided in order, in ' +
        'one step. ' +
        REASONS_DOC,
      body: BatchBody,
      response: BatchResult,
      errors: [404],
      handler: async (ctx) => {
        const by = ctx.principal!.sub;
        const scans = ctx.body.scans;
        const groups = new Map<string, { idx: number[]; scans: Array<ScanInput & { direction: 'in' | 'out' }> }>();
        const results: Array<ScanReply | Promise<ScanReply>> = new Array(scans.length);
        scans.forEach((b, i) => {
          const at = `body/scans/${i}`;
          const direction = b.direction ?? 'in';
          if (b.code === undefined && (direction === 'in' || b.ticketId === undefined)) {
            throw appError('ERR_VALIDATION', direction === 'in' ? `${at}/code is required` : `${at}/code or ${at}/ticketId is required`);
          }
          const { ev, located }: Target = svc.scanTarget(ctx.tenant, b);
          const s = scanInput(svc, ev, b, at);
          if (!ev) {
            results[i] = unmatched(svc, ctx.tenant, direction, s, by);
            return;
          }
          if (located) s.located = located;
          let g = groups.get(ev.sk);
          if (!g) groups.set(ev.sk, (g = { idx: [], scans: [] }));
          g.idx.push(i);
          g.scans.push({ ...s, direction });
        });
        await Promise.all(
          [...groups].map(async ([eventId, g]) => {
            const out = await svc.scanner<ScanReply[]>(ctx.tenant, eventId, { type: 'batch', by, scans: g.scans });
            g.idx.forEach((i, k) => (results[i] = out[k]));
          }),
        );
        return { results: await Promise.all(results) };
      },
    })),

    doorFree(route({
      method: 'POST',
      path: '/events/tickets/validate',
      auth: 'staff',
      tag: TAG,
      summary: 'Check a code without checking it in',
      description:
        'Same resolution and rules as check-in, with no change of state and nothing logged: `{valid, ticket?, reason?}`. ' +
        REASONS_DOC,
      body: ValidateBody,
      response: ValidateResult,
      errors: [404],
      handler: async (ctx) => {
        const b = ctx.body;
        const { ev, located }: Target = svc.scanTarget(ctx.tenant, b);
        scanInput(svc, ev, b, 'body');
        if (!ev) return { valid: false, reason: 'invalid_code' } satisfies ValidateReply;
        return svc.scanner<ValidateReply>(ctx.tenant, ev.sk, { type: 'validate', code: b.code, zone: b.zone, ...(located ? { located } : {}) });
      },
    })),

    route({
      method: 'GET',
      path: '/events/:id/checkin-stats',
      auth: 'staff',
      tag: TAG,
      summary: 'Check-in statistics of an event',
      description:
        '`total` is the number of check-in scans (allowed or denied, repeats included); `uniqueAttendees` the number of ' +
        'tickets that ever checked in. Check-outs are counted apart, in `checkouts`. `byHour` keys are UTC hour starts, ' +
        'by the time of the scan (an offline scan’s `scannedAt`).',
      params: EventParams,
      response: CheckinStats,
      errors: [404],
      handler: (ctx) => svc.scanner<Stats>(ctx.tenant, svc.event(ctx.tenant, ctx.params.id).sk, { type: 'stats' }),
    }),

    route({
      method: 'GET',
      path: '/events/:id/occupancy',
      auth: 'staff',
      tag: TAG,
      summary: 'Occupancy of each zone of an event',
      description:
        'Keyed by zone id (spec: Derived shapes → Occupancy). `currentOccupancy` is entries minus exits, never below 0; ' +
        '`totalEntranceScans` counts successful entries and `totalEligibilityScans` every check-in attempt at the zone. ' +
        'Scans without a zone are counted under `unknown`, which is not listed here.',
      params: EventParams,
      response: Occupancy,
      errors: [404],
      handler: (ctx) => svc.scanner<Record<string, ZoneOcc>>(ctx.tenant, svc.event(ctx.tenant, ctx.params.id).sk, { type: 'occupancy' }),
    }),
  ];
}

