// The live door view (issue 32): `GET /events/:id/door`, a page that ships with the server and
// holds no data, and `GET /events/:id/door/stream`, the Server-Sent Events it reads. Each `door`
// event is a whole snapshot (zones against capacity, scans per minute per checkpoint over the last
// hour, denials by reason, conflicts, devices seen): a viewer that missed one loses nothing, so
// nothing is replayed and a slow viewer gets only the latest (door-watch.ts shares the reads).
import type { DeviceView, ScannerDevices } from '../../../actors/devices/index.js';
import type { EventsApi } from '../../../actors/events/index.js';
import type { DoorViewFigures } from '../../../actors/scanner/index.js';
import type { AppDeps } from '../../deps.js';
import { doorViewPage } from '../../door-view/page.js';
import { route, type RouteDef } from '../../route.js';
import { doorFree } from './door-wait.js';
import { DoorWatch } from './door-watch.js';
import { EventParams } from './schemas.js';

const TAG = 'Check-in scanning';

/** Devices a snapshot lists at most (the latest seen first). */
const DEVICES_SHOWN = 100;

/** A timer cannot wait longer (2^31 - 1 ms); a longer-lived credential is looked at again then. */
const MAX_TIMER_MS = 2_147_483_647;

export interface DeviceSeen {
  id: string;
  name: string;
  /** false: a device id a scan typed, not an enrolled device. */
  enrolled: boolean;
  lastSeenAt: string | null;
  /** Scans the enrolled device made at any event; null for one not enrolled. */
  scanCount: number | null;
  /** Successful entries at this event. */
  entries: number;
}

/**
 * The event's devices: enrolled ones that have been seen and may scan it (or did), then the device
 * ids scans named without an enrolment. Latest seen first.
 */
export function devicesSeen(all: readonly DeviceView[], byDevice: Record<string, number>, eventId: string): DeviceSeen[] {
  const out: DeviceSeen[] = [];
  const enrolled = new Set<string>();
  for (const d of all) {
    enrolled.add(d.sk);
    const entries = byDevice[d.sk] ?? 0;
    if (entries === 0 && (d.lastSeenAt === null || d.status === 'revoked' || (d.eventIds !== null && !d.eventIds.includes(eventId)))) continue;
    out.push({ id: d.sk, name: d.name, enrolled: true, lastSeenAt: d.lastSeenAt, scanCount: d.scanCount, entries });
  }
  for (const id in byDevice) {
    if (!enrolled.has(id)) out.push({ id, name: id, enrolled: false, lastSeenAt: null, scanCount: null, entries: byDevice[id] });
  }
  out.sort((a, b) => (b.lastSeenAt ?? '').localeCompare(a.lastSeenAt ?? '') || b.entries - a.entries || (a.id < b.id ? -1 : 1));
  return out.length > DEVICES_SHOWN ? out.slice(0, DEVICES_SHOWN) : out;
}

export function doorViewRoutes(svc: EventsApi, devices: ScannerDevices, deps: AppDeps): RouteDef[] {
  // A view is served by the node it reaches (a stream is not forwarded): what it reads of the
  // tenant is read on the tenant's owner.
  const eventIdOf = deps.ownerReads.define('door-view.event', (tenant, idOrSlug: string) => svc.event(tenant, idOrSlug).sk);
  const devicesOf = deps.ownerReads.define('door-view.devices', (tenant, _: null) => devices.list(tenant));
  const watch = new DoorWatch(
    deps.bus,
    deps.logger,
    async (tenant, eventId) => {
      const f = await svc.scanner<DoorViewFigures>(tenant, eventId, { type: 'door-view' });
      const { byDevice, ...figures } = f;
      return `event: door\ndata: ${JSON.stringify({ ...figures, devices: devicesSeen(await devicesOf(tenant, null), byDevice, eventId) })}\n\n`;
    },
    () => ({ total: deps.config.door.viewStreams, perOrg: deps.config.door.viewStreamsPerOrg }),
  );
  let page: string | undefined;
  return [
    doorFree(
      route({
        method: 'GET',
        path: '/events/:id/door',
        auth: 'none',
        tenant: 'none',
        tag: TAG,
        summary: 'The live door view: a page showing the door of an event as it moves',
        description:
          'An HTML page for a browser (a phone at 390 px too). It holds no data: it signs in with the orgid and bearer ' +
          'token of the reference page (`/documentation`, Credentials; the same browser storage, so signing in on one ' +
          'signs in on the other) and reads `GET /events/:id/door/stream`. It shows each zone\'s occupancy against its ' +
          'capacity, scans per minute per checkpoint over the last hour, denials by reason, conflicts and the devices ' +
          'seen, updated within a second of a scan. Its script and style ship with the server: nothing is downloaded ' +
          'from elsewhere.',
        params: EventParams,
        handler: (ctx) => {
          ctx.type = 'text/html; charset=utf-8';
          ctx.responseHeaders['cache-control'] = 'no-cache';
          return (page ??= doorViewPage());
        },
      }),
    ),
    doorFree(
      route({
        method: 'GET',
        path: '/events/:id/door/stream',
        auth: 'staff',
        stream: true,
        tag: TAG,
        summary: 'The door of an event as Server-Sent Events: a snapshot now and within a second of every scan',
        description:
          'A `text/event-stream` of `event: door` events, each a whole snapshot in one `data:` line: `zones` (each ' +
          'zone\'s `inside` against its `capacity`, `percentFull`), `inside`, `scans`, `admitted`, `denied`, ' +
          '`checkouts`, `rate` (scans per minute per checkpoint over the last hour: `from`, `minutes` (60) and ' +
          '`checkpoints: [{checkpoint, perMinute: [60 counts, oldest first], total}]`, by the time of the scan; every ' +
          'check-in and check-out, allowed or denied; an annulment takes nothing away), `denials` by reason, ' +
          '`conflicts`, and `devices` (enrolled devices seen, and device ids scans named, with `lastSeenAt`, ' +
          '`scanCount` and this event\'s `entries`). The first event comes at once; another within a second of any ' +
          'scan of the event on any server, a rush coalesced to a few a second (no polling), and after a change of the ' +
          'event (its zones, their capacities). A `: heartbeat` comment ' +
          'goes out every 15 s. The stream ends with `event: end` `{"reason":"token_expired"}` when the access token ' +
          'expires: open it again with a fresh one. Views open at once are bounded per server (`DOOR_VIEW_STREAMS`, ' +
          '503) and per organisation (`DOOR_VIEW_STREAMS_PER_ORG`, 429).',
        params: EventParams,
        errors: [404, 429, 503],
        handler: async (ctx) => {
          const eventId = await eventIdOf(ctx.tenant, ctx.params.id);
          const release = watch.admit(ctx.tenant);
          const out = ctx.stream!;
          ctx.type = 'text/event-stream; charset=utf-8';
          ctx.responseHeaders['cache-control'] = 'no-cache, no-transform';
          ctx.responseHeaders['x-accel-buffering'] = 'no';
          // A viewer behind keeps only the latest snapshot: older ones are stale.
          let waiting = false;
          let pending: string | undefined;
          const send = (frame: string) => {
            if (out.closed) return;
            if (waiting) {
              pending = frame;
              return;
            }
            if (!out.write(frame)) {
              waiting = true;
              out.onDrain(() => {
                waiting = false;
                const next = pending;
                pending = undefined;
                if (next !== undefined) send(next);
              });
            }
          };
          const heartbeat = setInterval(() => {
            if (!waiting) send(': heartbeat\n\n');
          }, deps.config.chat.sseHeartbeatMs);
          heartbeat.unref();
          // The credential was checked once, at the start: the view lasts no longer than it.
          const exp = ctx.principal?.exp;
          let expiry: ReturnType<typeof setTimeout> | undefined;
          if (exp !== undefined) {
            const end = () => {
              const left = exp * 1000 - deps.clock.now();
              if (left > 0) {
                expiry = setTimeout(end, Math.min(left, MAX_TIMER_MS));
                expiry.unref();
              } else out.end(`event: end\ndata: ${JSON.stringify({ reason: 'token_expired' })}\n\n`);
            };
            end();
          }
          send('retry: 2000\n\n');
          const unwatch = watch.watch(ctx.tenant, eventId, send);
          out.onClose(() => {
            clearInterval(heartbeat);
            if (expiry) clearTimeout(expiry);
            unwatch();
            release();
          });
        },
      }),
    ),
  ];
}
