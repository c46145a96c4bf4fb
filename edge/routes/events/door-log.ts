// The door's undo and its readable scan log (issue 31): annul one successful scan, and read the
// event's scan log in log order with filters and a cursor. Staff routes, as the door's other reads.
import type { AppDeps } from '../../deps.js';
import { annulScan, scansOf, type EventsApi } from '../../../actors/events/index.js';
import { SCAN_LOG_EXAMINE, SCAN_LOG_MAX_PAGE, SCAN_LOG_PAGE } from '../../../actors/scanner/index.js';
import { doorFree } from './door-wait.js';
import { route, type RouteDef } from '../../route.js';
import { AnnulBody, AnnulResult, EventParams, ScanLogPage, ScansQuery } from './schemas.js';

const TAG = 'Check-in scanning';

export function doorLogRoutes(svc: EventsApi<AppDeps>): RouteDef[] {
  return [
    doorFree(route({
      method: 'POST',
      path: '/events/checkin/annul',
      auth: 'staff',
      tag: TAG,
      summary: 'Annul a scan (undo a check-in or check-out)',
      description:
        'Reverses one successful scan, named by its `scanId` (the `id` in `GET /events/:id/scans`) or by the `nonce` it was ' +
        'sent with, with its `eventId` or `listId`. The user (or device) that made the scan may annul it within ' +
        '`DOOR_ANNUL_WINDOW_S` of its receipt (default 900 s); an Admin may annul any scan at any time; anyone else is a 403. ' +
        'The annulment is an entry of its own in the scan log, and from then on the scan counts as never made: an annulled ' +
        'entry lets the ticket in again (its list\'s `maxEntries` no longer counts it), and it leaves the stats, the ' +
        'occupancy, the unique attendees and the list\'s tallies; an annulled check-out puts the ticket back inside. When ' +
        'the ticket has scanned again since, those later scans stand and the ticket stays where they put it (as in pretix: ' +
        'the check-in is marked reversed and the ticket\'s state recomputed from the others). A ticket left with no entry at ' +
        'all is `valid` again, without `checkedInAt`. Annulling a scan again answers the same; a refused scan or an ' +
        'annulment is a 409, an unknown one a 404. Answers the scan (now `annulled: true`) and the annulment, as the scan ' +
        'log lists them.',
      body: AnnulBody,
      response: AnnulResult,
      errors: [403, 404, 409],
      // An enrolled scanner device may undo its own scans, at its own events.
      device: true,
      handler: (ctx) => {
        const p = ctx.principal!;
        const caller = { id: p.sub, admin: p.kind !== 'device' && p.roles.includes('Admin') };
        return annulScan(svc, ctx.tenant, ctx.body, caller, svc.deps.config.door.annulWindowS * 1000, p.device);
      },
    })),

    doorFree(route({
      method: 'GET',
      path: '/events/:id/scans',
      auth: 'staff',
      tag: TAG,
      summary: 'Read the scan log of an event',
      description:
        'Every scan of the event, allowed or refused, check-outs and annulments included, in log order (the order the ' +
        `server received them), \`limit\` (default ${SCAN_LOG_PAGE}, at most ${SCAN_LOG_MAX_PAGE}) a page. Filters: \`listId\`, ` +
        '`deviceId`, `checkpoint`, `zone`, `success`, `reason`, `conflict`, and `since` (received at or after this instant). Send ' +
        '`next` back as `after` for the next page; `next` is null at the end of the log. A page costs the same at any ' +
        `depth (it starts at its cursor's key); with filters a request examines at most ${SCAN_LOG_EXAMINE.toLocaleString('en')} ` +
        'scans, so a rare filter may answer a short or empty page with a `next`: follow it. `annulled` says whether an ' +
        'annulment reversed the scan; an annulment names the scan in `annuls`. `offline` marks a scan made offline and ' +
        'uploaded later (`at` is when it was made; an offline scan of `POST /events/checkin/batch` keeps the device\'s ' +
        'decision); `conflict` an offline admission the server would have refused, with why in `conflictReason` (a ' +
        'double entry is `already_checked_in`).',
      params: EventParams,
      query: ScansQuery,
      response: ScanLogPage,
      errors: [404],
      handler: (ctx) => scansOf(svc, ctx.tenant, ctx.params.id, ctx.query, SCAN_LOG_PAGE),
    })),
  ];
}
