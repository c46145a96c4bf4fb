// Check-in lists (issue 31): which tickets a door admits, in which zones and when, each list with
// its own door state. Staff routes like the rest of event administration; writes go through the
// event's scanner actor, which keeps the lists in memory for the door.
import type { AppDeps } from '../../deps.js';
import type { StoredRecord } from '../../../core/store/record.js';
import {
  checkinListRecord,
  checkinListsOf,
  createCheckinList,
  deleteCheckinList,
  updateCheckinList,
  type EventsApi,
} from '../../../actors/events/index.js';
import { MAX_LISTS_PER_EVENT } from '../../../actors/scanner/index.js';
import { doorFree } from './door-wait.js';
import { route, type RouteDef } from '../../route.js';
import { CheckinListCreate, CheckinListUpdate, EventParams, ListOf, ListParams, Paging, RecordSchema } from './schemas.js';
import { Type } from '@sinclair/typebox';

const TAG = 'Check-in scanning';

const RULES_DOC =
  '`ticketTypeIds` (absent or null: every type; a ticket of another type scans as `product`), `zones` (absent or null: every ' +
  'zone; a scan at another zone is a 400, and a list of one zone places a scan that names none there), `allowReentry` ' +
  '(after a check-out on the list the ticket may enter again; absent or null: the event\'s `allowReentry`), ' +
  '`allowMultipleEntries` (default false: a ticket inside on the list scans as `already_checked_in`; true: each scan is ' +
  'another entry, no check-out needed), `exitAllAt` (`HH:MM` in the event\'s time zone: every day at that time everyone ' +
  'inside on the list is checked out, logged as check-outs by `system`; a durable timer, kept across restarts), `rules`: `validFrom`/`validUntil` (ISO instants) and `weekdays` (ISO 1 Monday … 7 Sunday, in the ' +
  'event\'s time zone) refuse with `invalid_time`; `maxEntries` and `maxEntriesPerDay` (local days) count successful ' +
  'entries on the list and refuse with `max_entries`. Each list keeps its own door state: a ticket valid on two lists ' +
  'enters each of them independently.';

/** The record as answered: `data` holds the list. */
const ListRecord = RecordSchema;

export function checkinListRoutes(svc: EventsApi<AppDeps>): RouteDef[] {
  // No route here reads a ticket record: none waits for the door's backlog.
  return [
    route({
      method: 'POST',
      path: '/events/:id/checkin-lists',
      auth: 'staff',
      tag: TAG,
      summary: 'Create a check-in list of an event',
      description:
        `A door a venue configures: \`{name, ticketTypeIds?, zones?, allowReentry?, allowMultipleEntries?, exitAllAt?, rules?}\`. ${RULES_DOC} ` +
        `Scans name it with \`listId\`. An event has at most ${MAX_LISTS_PER_EVENT} lists (409 beyond). Answers the list record.`,
      params: EventParams,
      body: CheckinListCreate,
      response: ListRecord,
      status: 201,
      errors: [404, 409],
      handler: (ctx) => createCheckinList(svc, ctx.tenant, ctx.params.id, ctx.body, ctx.principal!.sub),
    }),

    route({
      method: 'GET',
      path: '/events/:id/checkin-lists',
      auth: 'staff',
      tag: TAG,
      summary: 'List the check-in lists of an event',
      description: 'Oldest first. Figures per list are in `GET /events/:id/checkin-stats` (`byList`, or `?listId=`).',
      params: EventParams,
      query: Type.Object(Paging),
      response: ListOf(ListRecord),
      errors: [404],
      handler: (ctx) => checkinListsOf(svc, ctx.tenant, ctx.params.id, ctx.query),
    }),

    route({
      method: 'GET',
      path: '/events/checkin-lists/:listId',
      auth: 'staff',
      tag: TAG,
      summary: 'Get a check-in list',
      description: 'The list record (`data` as written by create and change). A list of another organisation is a 404. Its figures: `GET /events/:id/checkin-stats?listId=`.',
      params: ListParams,
      response: ListRecord,
      errors: [404],
      handler: (ctx): StoredRecord => checkinListRecord(svc, ctx.tenant, ctx.params.listId),
    }),

    route({
      method: 'PUT',
      path: '/events/checkin-lists/:listId',
      auth: 'staff',
      tag: TAG,
      summary: 'Change a check-in list',
      description:
        `Sets the fields sent (null resets \`ticketTypeIds\`, \`zones\`, \`allowReentry\`, \`exitAllAt\`); \`rules\` replaces the rules whole. ${RULES_DOC} ` +
        'The door applies the change from the next scan on; what the list counted so far (entries, who is inside) stays.',
      params: ListParams,
      body: CheckinListUpdate,
      response: ListRecord,
      errors: [404, 409],
      handler: (ctx) => {
        const { version, ...input } = ctx.body;
        return updateCheckinList(svc, ctx.tenant, ctx.params.listId, input, version);
      },
    }),

    route({
      method: 'DELETE',
      path: '/events/checkin-lists/:listId',
      auth: 'staff',
      tag: TAG,
      summary: 'Delete a check-in list',
      description: 'Scans naming it are refused (404) from then on; its scans stay in the event\'s log and figures.',
      params: ListParams,
      status: 204,
      errors: [404],
      handler: (ctx) => deleteCheckinList(svc, ctx.tenant, ctx.params.listId),
    }),
  ].map(doorFree);
}
