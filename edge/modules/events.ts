// The events feature area (spec: Endpoints → Events, and `/client/events/tickets/mine`): events
// and ticketing, with one door-scanning actor per event (actors/scanner) and one events actor per
// tenant (actors/events).
import { eventsActor, runExitAll } from '../../actors/events/index.js';
import { EventsApi } from '../../actors/events/index.js';
import {
  EVENT,
  EVENT_MEDIA,
  EVENT_ORDER,
  EVENT_PARTICIPANT,
  EVENT_SESSION,
  TICKET,
  TICKET_TYPE,
} from '../../actors/event-records/index.js';
import { CHECKIN_LIST, EXIT_ALL_JOB, scannerActor, unmatchedScansActor } from '../../actors/scanner/index.js';
import type { AppDeps } from '../deps.js';
import type { Module } from '../module.js';
import type { RouteDef } from '../route.js';
import { startPeriodic, stopPeriodic } from '../periodic.js';
import { attendeeRoutes } from '../routes/events/attendee.js';
import { closeMedia, sweepOrphanFiles } from '../routes/events/media.js';
import { eventRoutes } from '../routes/events/events.js';
import { scanningRoutes } from '../routes/events/scanning.js';
import { checkinListRoutes } from '../routes/events/checkin-lists.js';
import { doorLogRoutes } from '../routes/events/door-log.js';
import { ticketRoutes } from '../routes/events/tickets.js';
import { deviceRoutes } from '../routes/events/devices.js';
import { devicesActor, ScannerDevices } from '../../actors/devices/index.js';
import { waitsForDoor } from '../routes/events/door-wait.js';
import { doorFeedHearsRecordStore, doorFeedRoutes } from '../routes/events/door-feed.js';
import { doorKeyRoutes } from '../routes/events/door-keys.js';
import { doorViewRoutes } from '../routes/events/door-view.js';

const ORPHAN_SWEEP_FIRST_MS = 60 * 1000;
const ORPHAN_SWEEP_EVERY_MS = 60 * 60 * 1000;

/** A scanner replays its event's scan log when activated: keep it warm for an hour of quiet. */
const SCANNER_IDLE_MS = 60 * 60 * 1000;

/** How often a node writes its scanner devices' last-seen times and scan counts. */
const DEVICE_ACTIVITY_FLUSH_MS = 5000;

/** A route answers after the door's tickets behind are written unless its definition says it need not (routes/events/door-wait.ts). */
function afterDoor(deps: AppDeps, r: RouteDef): RouteDef {
  if (!waitsForDoor(r)) return r;
  const handler = r.handler;
  return {
    ...r,
    handler: (ctx) => {
      const wait = deps.services.doorBacklog.settle(ctx.tenant);
      return wait ? wait.then(() => handler(ctx)) : handler(ctx);
    },
  };
}

export const eventsModule: Module = {
  name: 'events',
  actors: [eventsActor, scannerActor({ idleMs: SCANNER_IDLE_MS }), unmatchedScansActor, devicesActor],
  indexes: [
    [EVENT, 'data.slug'],
    [TICKET_TYPE, 'data.event'],
    [TICKET, 'data.event'],
    [TICKET, 'data.number'],
    [TICKET, 'data.holderEmail'],
    [TICKET, 'data.customerId'],
    [TICKET, 'data.holderNameKeys'],
    [EVENT_ORDER, 'data.event'],
    [EVENT_SESSION, 'data.event'],
    [EVENT_PARTICIPANT, 'data.event'],
    [EVENT_MEDIA, 'data.event'],
    [CHECKIN_LIST, 'data.event'],
  ],
  // GET /events/:id/tickets, alone, by status, by type, by both, or by holder: a page by index at
  // any size. Each listing costs every ticket write an entry (a check-in moves those with status).
  listings: [
    { datatype: TICKET, equals: ['data.event'], sort: 'createdate' },
    { datatype: TICKET, equals: ['data.event', 'data.status'], sort: 'createdate' },
    { datatype: TICKET, equals: ['data.event', 'data.ticketTypeId'], sort: 'createdate' },
    // Status and type together: at a big event both are large (the VIP tickets still to come in).
    { datatype: TICKET, equals: ['data.event', 'data.status', 'data.ticketTypeId'], sort: 'createdate' },
    // A holder's tickets; with a status or type too, this listing is read narrowed (a holder's are few).
    { datatype: TICKET, equals: ['data.event', 'data.holderEmail'], sort: 'createdate' },
    // An event's participants (by name; all, or of a status), sessions and media.
    { datatype: EVENT_PARTICIPANT, equals: ['data.event'], sort: 'data.name' },
    { datatype: EVENT_PARTICIPANT, equals: ['data.event', 'data.status'], sort: 'data.name' },
    { datatype: EVENT_SESSION, equals: ['data.event'], sort: 'data.startTime' },
    { datatype: EVENT_SESSION, equals: ['data.event', 'data.track'], sort: 'data.startTime' },
    { datatype: EVENT_PARTICIPANT, equals: ['data.event', 'data.role'], sort: 'data.name' },
    // The organisation's events (all, or drafts or published) by start date.
    { datatype: EVENT, equals: [], sort: 'data.startDate' },
    { datatype: EVENT, equals: ['data.status'], sort: 'data.startDate' },
    { datatype: EVENT_MEDIA, equals: ['data.event'], sort: 'createdate' },
  ],
  perNode(deps) {
    // Scanner devices: their credential (after the bearer token and API keys), and their activity
    // written behind every few seconds and once more when the node stops.
    const devices = new ScannerDevices(deps);
    deps.credentials.push((headers, tenant) => devices.resolve(headers, tenant));
    const svc = new EventsApi(deps, undefined, devices);
    let offFeed: (() => void) | undefined;
    return {
      routes: [...eventRoutes(svc), ...ticketRoutes(svc), ...scanningRoutes(svc), ...checkinListRoutes(svc), ...doorLogRoutes(svc), ...attendeeRoutes(svc), ...deviceRoutes(devices, svc), ...doorFeedRoutes(svc), ...doorKeyRoutes(svc), ...doorViewRoutes(svc, devices, deps)].map((r) =>
        afterDoor(deps, r),
      ),
      async start() {
        // A check-in list's daily automatic check-out (`exitAllAt`): a durable timer per list.
        deps.services.scheduler.register(EXIT_ALL_JOB, (job) => runExitAll(svc, job));
        // A single node writes what a crash left behind before it serves; in a cluster a tenant's
        // owner does it on the first read or scan of the tenant. (The door's read barrier and
        // background materializer are the node's port, actors/scanner/door-backlog.ts.)
        if (!deps.config.natsUrl) await svc.resumeDoors(deps.services.doorBacklog);
        startPeriodic(deps, 'scanner device activity', () => devices.flush(), DEVICE_ACTIVITY_FLUSH_MS);
        offFeed = doorFeedHearsRecordStore(deps, svc);
      },
      async stop() {
        offFeed?.();
        stopPeriodic(deps, 'scanner device activity');
        await devices.flush().catch((err: unknown) => deps.logger.warn({ err }, 'scanner device activity not written at stop'));
      },
    };
  },
  start(deps) {
    // Hourly, from a minute after start: files no media record names (see sweepOrphanFiles).
    startPeriodic(deps, 'media file sweep', () => sweepOrphanFiles(deps), ORPHAN_SWEEP_EVERY_MS, ORPHAN_SWEEP_FIRST_MS);
  },
  // Unfinished chunked uploads and their temp files go with the node.
  stop(deps) {
    stopPeriodic(deps, 'media file sweep');
    return closeMedia(deps);
  },
};
