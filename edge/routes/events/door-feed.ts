// The door feed (issue 32): an event's tickets and check-in lists for a scanner that decides scans
// with no network, as a full sync and then deltas (actors/events/door-feed.ts).
import { Type } from '@sinclair/typebox';
import type { AppDeps } from '../../deps.js';
import { doorFeed, FEED_DEFAULT_LIMIT, FEED_MAX_LIMIT, type EventsApi } from '../../../actors/events/index.js';
import { route, type RouteDef } from '../../route.js';
import { RECORD_WRITTEN } from '../../../actors/records/index.js';
import { TICKET } from '../../../actors/event-records/index.js';
import { EventParams } from './schemas.js';

const TAG = 'Check-in scanning';

const Nullable = <T extends ReturnType<typeof Type.String>>(t: T) => Type.Union([t, Type.Null()]);
const NullableInt = Type.Union([Type.Integer(), Type.Null()]);

const FeedQuery = Type.Object({
  since: Type.Optional(Type.String({ minLength: 1, maxLength: 1024, description: 'The `cursor` of the previous answer; absent: a full sync' })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: FEED_MAX_LIMIT, description: `Tickets per page (default ${FEED_DEFAULT_LIMIT})` })),
});

const FeedTicket = Type.Object({
  id: Type.String(),
  number: Type.String({ description: 'The static code as issued' }),
  codeTag: Nullable(Type.String({ description: "base64url(sha256(codeSecret)).slice(0, 8): the generation of the ticket's codes; null before its first QR code" })),
  ticketTypeId: Type.String(),
  holderName: Nullable(Type.String()),
  status: Type.String({ description: 'valid, checked_in, refunded or cancelled' }),
  requiresActivation: Type.Boolean(),
  activated: Type.Boolean(),
  checkedIn: Type.Boolean({ description: 'Ever entered at the event' }),
  lists: Type.Record(Type.String(), Type.Object({ entries: Type.Integer(), inside: Type.Boolean() }), {
    description: 'The check-in lists it entered on: its successful entries there and whether it is inside there now',
  }),
});

const FeedList = Type.Object({
  id: Type.String(),
  name: Type.String(),
  ticketTypeIds: Type.Union([Type.Array(Type.String()), Type.Null()]),
  zones: Type.Union([Type.Array(Type.String()), Type.Null()]),
  allowReentry: Type.Union([Type.Boolean(), Type.Null()]),
  allowMultipleEntries: Type.Boolean(),
  rules: Type.Object({
    validFrom: Nullable(Type.String()),
    validUntil: Nullable(Type.String()),
    maxEntries: NullableInt,
    maxEntriesPerDay: NullableInt,
    weekdays: Type.Union([Type.Array(Type.Integer()), Type.Null()]),
  }),
});

const FeedPage = Type.Object({
  event: Type.Object({
    id: Type.String(),
    timezone: Type.String(),
    allowReentry: Type.Boolean(),
    codeWindowSeconds: Type.Number(),
    codeSkewSeconds: Type.Number(),
    zones: Type.Array(Type.Object({ id: Type.String(), name: Type.String(), capacity: NullableInt })),
  }),
  tickets: Type.Array(FeedTicket),
  lists: Type.Array(FeedList),
  revoked: Type.Array(
    Type.Object({
      id: Type.String(),
      reason: Type.Union([Type.Literal('refunded'), Type.Literal('cancelled'), Type.Literal('deleted'), Type.Literal('transferred')]),
      at: Type.String({ format: 'date-time' }),
    }),
  ),
  cursor: Type.String({ description: 'Opaque: send it back as `since`' }),
  complete: Type.Boolean({ description: 'true: nothing more to read now; later calls with this cursor answer what changed since' }),
});

export function doorFeedRoutes(svc: EventsApi<AppDeps>): RouteDef[] {
  return [
    route({
      method: 'GET',
      path: '/events/:id/door-feed',
      auth: 'staff',
      tag: TAG,
      summary: 'Sync the tickets and check-in lists a scanner needs offline',
      description:
        'What a scanner device needs to decide scans with no network: the event\'s door settings, its tickets (static code, ' +
        '`codeTag` to check signed codes against, type, holder name, status, activation, whether it ever entered and its ' +
        'entries and presence on each check-in list), its check-in lists with their rules, and revocations. Without `since` ' +
        `it is a full sync, \`limit\` tickets a page (default ${FEED_DEFAULT_LIMIT}, at most ${FEED_MAX_LIMIT}), in id order: ` +
        'keep calling with the answered `cursor` as `since` until `complete` is true; later calls with the last cursor answer ' +
        'only what changed since (a delta). The cursor is a watermark: a full sync continues with every change committed ' +
        'after it began, so a ticket written while the pages were read is not lost, and an interrupted download resumes ' +
        'from its last cursor. A page may be short (even empty) with `complete` false: follow the cursor. `lists` is every ' +
        'list of the event on the first page of a full sync and on any page covering a list change (a list missing then was ' +
        'deleted), else empty. `revoked` names tickets whose codes no longer admit: `refunded` and `cancelled` (also in ' +
        '`tickets` with that status), `deleted`, and `transferred` (its earlier codes are void; it is also in `tickets` with ' +
        'its new `codeTag`). A cursor this feed did not answer, or one of another event, is a 400. Staff, or a scanner ' +
        'device enrolled for the event (403 for another event\'s device).',
      params: EventParams,
      query: FeedQuery,
      response: FeedPage,
      errors: [400, 403, 404],
      device: true,
      handler: (ctx) => {
        const ev = svc.event(ctx.tenant, ctx.params.id);
        svc.deviceMay(ctx.principal!.device, ev);
        return doorFeed(svc, ctx.tenant, ev, ctx.query.since, ctx.query.limit ?? FEED_DEFAULT_LIMIT);
      },
    }),
  ];
}

/**
 * A ticket written or deleted through the record store (around its event's scanner, the feed's
 * single writer) reaches the feed: the event's scanner logs it on hearing of it. Heard on the bus
 * once the write committed, so unlike the scanner's own changes it is not in the write's batch (a
 * crash between the two loses it): the record store is the escape hatch around the door, not its
 * way in. Every node hears it; the scanner keeps one entry per ticket, so a repeat is harmless.
 * Answers the unsubscribe.
 */
export function doorFeedHearsRecordStore(deps: AppDeps, svc: EventsApi<AppDeps>): () => void {
  const prefix = `${RECORD_WRITTEN}.`;
  return deps.bus.subscribe(`${prefix}*`, (event, subject) => {
    const e = event as { datatype?: unknown; sk?: unknown; event?: unknown };
    if (e.datatype !== TICKET || typeof e.sk !== 'string' || typeof e.event !== 'string') return;
    const tenant = subject.slice(prefix.length);
    const ev = svc.findEvent(tenant, e.event);
    if (!ev) return;
    svc.scanner(tenant, ev.sk, { type: 'feed-touch', ticketId: e.sk }).catch((err: unknown) => deps.logger.warn({ err, tenant }, 'the door feed could not log a ticket written through the record store'));
  });
}
