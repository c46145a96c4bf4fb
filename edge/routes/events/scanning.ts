// Door scanning (spec: Endpoints → Events, payload rules 1 and 2; Derived shapes). A scan is one
// message to its event's scanner actor; the answer comes back once the scan log entry is committed
// (the ticket record learns its new status behind, see actors/scanner/door-backlog.ts). A denial is
// a 200 with `success: false` and a reason. A code is resolved once: by the scanner, or here when
// the scan names no event (the ticket found is handed on, not looked up again).
import type { AppDeps } from '../../deps.js';
import type { DeviceScope } from '../../../core/auth/tokens.js';
import { AppError, appError, statusName } from '../../../core/errors.js';
import type { StoredRecord } from '../../../core/store/record.js';
import { DEFAULT_CODE_SKEW_SECONDS } from '../../../actors/event-records/index.js';
import {
  type BatchItemReply,
  type DenialReason,
  type Located,
  type OfflineDecision,
  scanEntry,
  type ScanInput,
  type ScanReply,
  type ValidateReply,
} from '../../../actors/scanner/index.js';
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
  StatsQuery,
  ValidateBody,
  ValidateResult,
} from './schemas.js';
import { checkinStats, occupancy, type EventsApi, type ListTarget } from '../../../actors/events/index.js';

const TAG = 'Check-in scanning';

const LIST_SCAN_DOC =
  'Send `listId` to scan at a check-in list (`POST /events/:id/checkin-lists`): the list\'s ticket types, times and ' +
  'entry rules decide, and the list keeps its own door state, so a ticket may be inside the hall list and the lounge ' +
  'list at once; the event is the list\'s (a ticket of another event is `wrong_event`). A scan without `listId` uses ' +
  'the event\'s own door, as for an event without lists. ';

const DEVICE_SCAN_DOC =
  'An enrolled scanner device (`Authorization: Device <token>`, `POST /events/devices`) may call it for its events only ' +
  '(403 for another event or its list); its scans carry its own `deviceId` (a typed one is replaced) and its list and ' +
  'checkpoint unless the scan names a list of its events or a checkpoint, and a scan naming no event goes to its list, ' +
  'or its one event. ';

interface ScanBody {
  code?: string;
  ticketId?: string;
  zone?: string;
  checkpoint?: string;
  eventId?: string;
  listId?: string;
  nonce?: string;
  scannedAt?: string;
  deviceId?: string;
}

interface BatchScanBody extends ScanBody {
  direction?: 'in' | 'out';
  offline?: boolean;
  decision?: 'admitted' | 'denied';
  reason?: DenialReason;
}

const OFFLINE_DOC =
  'Offline uploads: a scan with `offline: true` was decided by a device with no network and needs `scannedAt`, `nonce` ' +
  'and the device\'s `decision` (`admitted` or `denied`, with its denial `reason` when it gave one). The decision is recorded as ' +
  'made, never decided again: an admitted scan is logged successful at its `scannedAt` (received now) and the ticket is ' +
  'inside; a denied one is logged denied with the device\'s reason. Its result is `{success, offline: true, ticketId?, ' +
  'reason?, conflict?, conflictReason?}`: the ticket by id (the device has it from its feed), not the whole ticket. When the server would have refused an admission (the ' +
  'ticket entered elsewhere already: `already_checked_in`; refunded, cancelled, over a list\'s limits, a zone full, …) ' +
  'the answer and the scan log say `conflict: true` with `conflictReason`, and `checkin-stats` counts it in `conflicts` ' +
  '(and in `successful`). A double entry does not double the door: a ticket already inside on the scan\'s door stays ' +
  'inside once (it moves to the scan\'s zone, as a multiple-entry list moves it), and a check-in list counts the entry ' +
  'against its `maxEntries`. An admitted code that matches no ticket of the event places no one. An offline check-out ' +
  'of a ticket the server did not have inside is logged with `conflict` (`not_checked_in`) but not counted in ' +
  '`conflicts`, which counts admissions. A batch\'s offline ' +
  'scans of one event are decided in the order they were made (`scannedAt`; ties as sent), in the places offline scans ' +
  'hold in the batch; online scans keep their place; so the second of two devices\' admissions of one ticket to be ' +
  'uploaded is the conflict. A bad offline scan (an unknown zone, list or event, a `scannedAt` in the future, a missing ' +
  'field) answers `{success: false, error: {statusCode: 400, error: "Bad Request", message}}` in its slot and the other ' +
  'scans commit; so does any scan naming a check-in list deleted while the batch was on its way. An online scan\'s ' +
  'problem is a 400 for the whole batch, as before, and so is an item that does not fit the schema (a malformed field, ' +
  'an unknown `reason`); a scan a device may not make (another event) is a 403. '

/** An offline item's decision, once its required fields are there. */
function offlineDecision(b: BatchScanBody, at: string): OfflineDecision {
  const missing = (['scannedAt', 'nonce', 'decision'] as const).filter((k) => b[k] === undefined);
  if (missing.length) throw appError('ERR_VALIDATION', missing.map((k) => `${at}/${k} is required with offline`).join('; '));
  if (b.reason !== undefined && b.decision !== 'denied') throw appError('ERR_VALIDATION', `${at}/reason is only for a denied scan`);
  return b.reason !== undefined ? { decision: b.decision!, reason: b.reason } : { decision: b.decision! };
}

interface Target {
  /** Undefined: the scan names no event and its code matches no ticket. */
  ev: StoredRecord | undefined;
  /** The ticket the code was found to name on the way (handed to the scanner). */
  located?: Located;
  /** The check-in list the scan names. */
  list?: ListTarget;
}

/**
 * Checks what only the event and the list can tell (their zones, the clock-skew tolerance) and
 * builds the input. A list serving one zone places a scan that names none there.
 */
function scanInput(svc: EventsApi<AppDeps>, { ev, list }: Target, b: ScanBody, at: string): ScanInput {
  let zone = b.zone;
  if (zone !== undefined && ev) {
    const zones = Array.isArray(ev.data.zones) ? (ev.data.zones as Array<{ id: string }>) : [];
    if (!zones.some((z) => z.id === zone)) throw appError('ERR_VALIDATION', `${at}/zone "${zone}" is not a zone of event ${ev.sk}`);
  }
  if (list?.zones) {
    if (zone === undefined && list.zones.length === 1) zone = list.zones[0];
    else if (zone !== undefined && !list.zones.includes(zone)) throw appError('ERR_VALIDATION', `${at}/zone "${zone}" is not a zone of check-in list ${list.id}`);
  }
  const s: ScanInput = { code: b.code, ticketId: b.ticketId, zone, checkpoint: b.checkpoint, nonce: b.nonce, device: b.deviceId };
  if (list) s.list = list.id;
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

function scan(svc: EventsApi<AppDeps>, tenant: string, kind: 'in' | 'out', b: ScanBody, by: string | null, device?: DeviceScope): Promise<ScanReply> {
  const target: Target = svc.scanTarget(tenant, b, 'body', device);
  const { ev, located } = target;
  const s = svc.stampScan(tenant, scanInput(svc, target, b, 'body'), device);
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
        LIST_SCAN_DOC +
        DEVICE_SCAN_DOC +
        REASONS_DOC,
      body: CheckinBody,
      response: ScanResult,
      errors: [404],
      device: true,
      handler: (ctx) => scan(svc, ctx.tenant, 'in', ctx.body, ctx.principal!.sub, ctx.principal!.device),
    })),

    doorFree(route({
      method: 'POST',
      path: '/events/checkout',
      auth: 'staff',
      tag: TAG,
      summary: 'Check a ticket out',
      description:
        'By `code` (resolved as for check-in) or `ticketId`. The ticket must be inside (`not_checked_in` otherwise); its ' +
        'status stays `checked_in` and its zone counts one exit. With re-entry on it may enter again. With `listId` the ' +
        'ticket must be inside on that list, and leaves it only (inside on another list, it stays there). ' +
        DEVICE_SCAN_DOC +
        REASONS_DOC,
      body: CheckoutBody,
      response: ScanResult,
      errors: [404],
      device: true,
      handler: (ctx) => {
        if (ctx.body.code === undefined && ctx.body.ticketId === undefined) throw appError('ERR_VALIDATION', 'body/code or body/ticketId is required');
        return scan(svc, ctx.tenant, 'out', ctx.body, ctx.principal!.sub, ctx.principal!.device);
      },
    })),

    doorFree(route({
      method: 'POST',
      path: '/events/checkin/batch',
      auth: 'staff',
      tag: TAG,
      summary: 'Upload scans made offline (up to 500)',
      description:
        'Each scan is `{code | ticketId, direction?: "in" | "out", zone?, checkpoint?, eventId?, listId?, nonce?, scannedAt?}`; ' +
        'results come back in the same order, each in the check-in answer shape. Send a `nonce` with every offline scan: a ' +
        'retried upload answers the original results and counts nothing twice. Scans of one event are decided in order, in ' +
        'one step. ' +
        OFFLINE_DOC +
        DEVICE_SCAN_DOC +
        REASONS_DOC,
      body: BatchBody,
      response: BatchResult,
      errors: [404],
      device: true,
      handler: async (ctx) => {
        const by = ctx.principal!.sub;
        const device = ctx.principal!.device;
        const scans = ctx.body.scans;
        const groups = new Map<string, { idx: number[]; scans: Array<ScanInput & { direction: 'in' | 'out' }> }>();
        const results: Array<BatchItemReply | Promise<BatchItemReply>> = new Array(scans.length);
        const take = (b: BatchScanBody, i: number) => {
          const at = `body/scans/${i}`;
          const direction = b.direction ?? 'in';
          if (b.code === undefined && (direction === 'in' || b.ticketId === undefined)) {
            throw appError('ERR_VALIDATION', direction === 'in' ? `${at}/code is required` : `${at}/code or ${at}/ticketId is required`);
          }
          if (b.offline !== true && (b.decision !== undefined || b.reason !== undefined)) {
            throw appError('ERR_VALIDATION', `${at}/decision and ${at}/reason are only for offline scans (offline: true)`);
          }
          const offline = b.offline === true ? offlineDecision(b, at) : undefined;
          const target: Target = svc.scanTarget(ctx.tenant, b, at, device);
          const { ev, located } = target;
          const s = scanInput(svc, target, b, at);
          if (offline) {
            // Its decision must be kept with its nonce, in its event's log.
            if (!ev) throw appError('ERR_VALIDATION', `${at}: the code matches no ticket and the scan names no event (send eventId or listId)`);
            s.offline = offline;
          }
          svc.stampScan(ctx.tenant, s, device);
          if (!ev) {
            results[i] = unmatched(svc, ctx.tenant, direction, s, by);
            return;
          }
          if (located) s.located = located;
          let g = groups.get(ev.sk);
          if (!g) groups.set(ev.sk, (g = { idx: [], scans: [] }));
          g.idx.push(i);
          g.scans.push({ ...s, direction });
        };
        scans.forEach((b, i) => {
          if (b.offline !== true) return take(b, i);
          // An offline item answers its own problems in its slot (the device cannot fix the past by
          // retrying); a refusal of the caller (403) still refuses the upload.
          try {
            take(b, i);
          } catch (err) {
            if (!(err instanceof AppError) || (err.statusCode !== 400 && err.statusCode !== 404)) throw err;
            results[i] = { success: false, error: { statusCode: 400, error: statusName(400), message: err.message } };
          }
        });
        await Promise.all(
          [...groups].map(async ([eventId, g]) => {
            const out = await svc.scanner<BatchItemReply[]>(ctx.tenant, eventId, { type: 'batch', by, scans: g.scans });
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
        'Same resolution and rules as check-in (a check-in list\'s too, with `listId`), with no change of state and nothing ' +
        'logged: `{valid, ticket?, reason?}`. ' +
        DEVICE_SCAN_DOC +
        REASONS_DOC,
      body: ValidateBody,
      response: ValidateResult,
      errors: [404],
      device: true,
      handler: async (ctx) => {
        const b = ctx.body;
        const target: Target = svc.scanTarget(ctx.tenant, b, 'body', ctx.principal!.device);
        const { ev, located } = target;
        const s = scanInput(svc, target, b, 'body');
        if (!ev) return { valid: false, reason: 'invalid_code' } satisfies ValidateReply;
        return svc.scanner<ValidateReply>(ctx.tenant, ev.sk, { type: 'validate', code: b.code, zone: s.zone, ...(s.list ? { list: s.list } : {}), ...(located ? { located } : {}) });
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
        'by the time of the scan (an offline scan’s `scannedAt`). `inside` counts tickets inside now, a ticket inside on ' +
        'two check-in lists once. `byList` gives each check-in list\'s own figures (its scans, the tickets that entered ' +
        'on it, those inside on it). `byCheckpoint` and `byDevice` count successful entries per checkpoint and device (scans ' +
        'naming one). `conflicts` counts offline admissions the server would have refused (a ticket admitted offline at ' +
        'two devices is one entry and one conflict; see `POST /events/checkin/batch`), also counted in `successful`; a ' +
        'list\'s figures in `byList` carry `conflicts` when it has any. ' +
        'An annulled scan (`POST /events/checkin/annul`) counts nowhere. With `listId` every field is that ' +
        'list\'s alone (a list of another event is a 404).',
      params: EventParams,
      query: StatsQuery,
      response: CheckinStats,
      errors: [404],
      handler: (ctx) => checkinStats(svc, ctx.tenant, ctx.params.id, ctx.query.listId),
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
        'Scans without a zone are counted under `unknown`, which is not listed here. With `listId`, the zones of that ' +
        'check-in list with its own entries and exits (`currentOccupancy`, `totalEntranceScans`, `totalEligibilityScans`); ' +
        '`availableCapacity` and `percentFull` stay those of the zone as a whole.',
      params: EventParams,
      query: StatsQuery,
      response: Occupancy,
      errors: [404],
      handler: (ctx) => occupancy(svc, ctx.tenant, ctx.params.id, ctx.query.listId),
    }),
  ];
}

