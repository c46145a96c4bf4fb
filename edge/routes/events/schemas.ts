// Schemas of the /events routes: event and ticket-type input, scans and their answers, the
// derived shapes (spec: Derived shapes), and the params and paging every list shares.
import { Type } from '@sinclair/typebox';
import { SLUG_PATTERN } from '../../../actors/event-records/index.js';
import { DENIAL_MEANINGS, DENIAL_REASONS } from '../../../actors/scanner/index.js';
import { ListOf, RecordList, RecordSchema } from '../records/schemas.js';
import { MoneyLike } from '../storefront/common.js';

export { ListOf, RecordList, RecordSchema };

/**
 * A ticket record. The fields the service writes are declared (documented, and serialized by
 * the compiled serializer at about twice the speed of undeclared ones: this is the scan answer).
 * All are optional, as a ticket written through the record store may lack any; fields not listed
 * are sent as they are.
 */
const Str = Type.Union([Type.String(), Type.Null()]);
export const TicketSchema = Type.Object(
  {
    ...RecordSchema.properties,
    data: Type.Object(
      {
        event: Type.Optional(Type.String({ description: 'Event id (or slug, for tickets written that way)' })),
        ticketTypeId: Type.Optional(Str),
        ticketTypeTitle: Type.Optional(Str),
        number: Type.Optional(Type.String({ description: 'The static code' })),
        holderEmail: Type.Optional(Str),
        holderName: Type.Optional(Str),
        status: Type.Optional(Type.String({ description: '`valid`, `checked_in`, `refunded` or `cancelled`' })),
        currency: Type.Optional(Str),
        source: Type.Optional(Str),
        orderId: Type.Optional(Str),
        customerId: Type.Optional(Str),
        zone: Type.Optional(Type.Union([Type.String(), Type.Null()], { description: 'Zone the ticket is inside' })),
        checkedInAt: Type.Optional(Str),
        lastCheckInAt: Type.Optional(Str),
        lastCheckOutAt: Type.Optional(Str),
      },
      { additionalProperties: true },
    ),
  },
  { additionalProperties: true },
);

export const HEX24 = '^[0-9a-f]{24}$';
export const Id = Type.String({ pattern: HEX24, description: '24-character hexadecimal record id' });
/** An event is named by its id or its slug everywhere (spec: `data.event` holds either). */
export const EventRef = Type.String({ minLength: 1, maxLength: 80, description: 'Event id (24 hex) or slug' });
export const EventParams = Type.Object({ id: EventRef });
export const IdParams = Type.Object({ id: Id });

const ZONE_ID = '^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$';
const Email = Type.String({ format: 'email', maxLength: 254 });
const DateTime = Type.String({ format: 'date-time' });
const Text = (max: number, description?: string) => Type.String({ maxLength: max, ...(description ? { description } : {}) });

export const ZoneInput = Type.Object(
  {
    id: Type.Optional(Type.String({ pattern: ZONE_ID, description: 'Zone id used by scanners; defaults to the kebab-cased name. `unknown` is reserved' })),
    name: Type.String({ minLength: 1, maxLength: 120 }),
    capacity: Type.Optional(Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], { description: 'People allowed inside at once; null or absent: no limit' })),
  },
  { additionalProperties: false },
);

const PerkInput = Type.Object(
  {
    id: Type.Optional(Type.String({ pattern: ZONE_ID, description: 'Defaults to the kebab-cased name' })),
    name: Type.String({ minLength: 1, maxLength: 120 }),
    description: Type.Optional(Text(1000)),
  },
  { additionalProperties: false },
);

export const TicketTypeInput = Type.Object(
  {
    id: Type.Optional(Type.String({ pattern: HEX24, description: 'Present: update that type; absent: create one' })),
    title: Type.Optional(Type.String({ minLength: 1, maxLength: 120, description: 'Required when creating' })),
    colour: Type.Optional(Type.String({ minLength: 1, maxLength: 32, description: 'Badge colour, e.g. `#1E90FF`' })),
    price: Type.Optional(MoneyLike('Price of one ticket in major units of the event currency (25 or "25.00" is 25.00; default 0), at most 1000000 in a two-decimal currency')),
    quantity: Type.Optional(Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], { description: 'Tickets that may be issued; null: no limit' })),
    perks: Type.Optional(Type.Array(PerkInput, { maxItems: 50 })),
    requiresActivation: Type.Optional(Type.Boolean({ description: 'Tickets of this type scan as `not_active` until activated' })),
    description: Type.Optional(Text(2000)),
  },
  { additionalProperties: false },
);

const eventFields = {
  slug: Type.Optional(Type.String({ pattern: SLUG_PATTERN, maxLength: 80, description: 'Lower-case words joined by dashes; defaults to the kebab-cased name' })),
  description: Type.Optional(Text(10_000)),
  startDate: Type.Optional(DateTime),
  endDate: Type.Optional(DateTime),
  timezone: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'IANA time zone (default `UTC`)' })),
  venue: Type.Optional(Text(200)),
  currency: Type.Optional(Type.String({ pattern: '^[A-Z]{3}$', description: 'ISO 4217 code (default `USD`)' })),
  capacity: Type.Optional(Type.Union([Type.Integer({ minimum: 0 }), Type.Null()])),
  zones: Type.Optional(Type.Array(ZoneInput, { maxItems: 100, description: 'Replaces the zone list' })),
  allowReentry: Type.Optional(Type.Boolean({ description: 'After a check-out, may the ticket enter again (default true)' })),
  codeWindowSeconds: Type.Optional(Type.Integer({ minimum: 5, maximum: 3600, description: 'How long a dynamic QR code is good (default 30)' })),
  codeSkewSeconds: Type.Optional(Type.Integer({ minimum: 0, maximum: 600, description: 'Clock-skew tolerance either way (default 60)' })),
  ticketTypes: Type.Optional(Type.Array(TicketTypeInput, { maxItems: 100, description: 'Ticket types to create (no id) or update (id); others are kept' })),
};

export const EventCreate = Type.Object({ name: Type.String({ minLength: 1, maxLength: 200 }), ...eventFields }, { additionalProperties: false });
export const EventUpdate = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    ...eventFields,
    version: Type.Optional(Type.Integer({ minimum: 1, description: 'The version read; a stale one is a 409' })),
  },
  { additionalProperties: false },
);

export const EventWithTypes = Type.Object(
  {
    ...RecordSchema.properties,
    ticketTypes: Type.Array(RecordSchema, { description: 'Every ticket type of the event, oldest first; `data.price` in major units of the event currency' }),
  },
  { additionalProperties: true },
);

export const Paging = {
  page: Type.Optional(Type.Integer({ minimum: 1, description: 'Page, 1-based (default 1)' })),
  pageSize: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, description: 'Page size (default 20, at most 200)' })),
};

export const TicketType = Type.Object(
  {
    id: Type.String(),
    title: Type.String(),
    colour: Type.Union([Type.String(), Type.Null()]),
    price: Type.Number({ description: 'Major units of `currency` (25.5 is 25.50)' }),
    currency: Type.String(),
    quantity: Type.Union([Type.Integer(), Type.Null()]),
    sold: Type.Integer({ description: 'Live tickets issued (valid or checked in)' }),
    available: Type.Union([Type.Integer(), Type.Null()], { description: 'quantity − sold; null: no limit' }),
    requiresActivation: Type.Boolean(),
    perks: Type.Array(Type.Object({ id: Type.String(), name: Type.String(), description: Type.Union([Type.String(), Type.Null()]) })),
    description: Type.Union([Type.String(), Type.Null()]),
    version: Type.Integer(),
  },
  { additionalProperties: false },
);

// --- Scanning -------------------------------------------------------------------------------

export const REASONS_DOC =
  'A denial is a 200 with `success: false` and a stable `reason` (spec: Errors, case 2): ' +
  DENIAL_REASONS.map((r) => `\`${r}\` (${DENIAL_MEANINGS[r]})`).join(', ') +
  '.';

const scanFields = {
  zone: Type.Optional(Type.String({ pattern: ZONE_ID, description: 'Zone id; scans without one are counted under `unknown`' })),
  checkpoint: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'Gate or device position, logged with the scan' })),
  eventId: Type.Optional(Type.String({ minLength: 1, maxLength: 80, description: 'Event id or slug; a ticket of another event is `wrong_event`. Absent: the list decides, else the code' })),
  listId: Type.Optional(
    Type.String({
      pattern: HEX24,
      description:
        'Check-in list scanned at: its rules decide, and it keeps its own door state (a ticket of another event is `wrong_event`). ' +
        'Absent: the event\'s own door, as without lists',
    }),
  ),
  nonce: Type.Optional(
    Type.String({ minLength: 1, maxLength: 128, description: 'Offline scanners: a repeated nonce answers the original result and counts once' }),
  ),
  scannedAt: Type.Optional(Type.String({ format: 'date-time', description: 'When an offline scanner made the scan; used for byHour and the code window' })),
  deviceId: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
};

const Code = Type.String({ minLength: 1, maxLength: 512, description: 'Dynamic QR payload, ticket number or credential code' });

export const CheckinBody = Type.Object({ code: Code, ...scanFields }, { additionalProperties: false });
export const CheckoutBody = Type.Object(
  { code: Type.Optional(Code), ticketId: Type.Optional(Id), ...scanFields },
  { additionalProperties: false },
);
const Reason = Type.Union(
  DENIAL_REASONS.map((r) => Type.Literal(r)),
  { description: 'Why the scan was denied' },
);

export const BatchScan = Type.Object(
  {
    code: Type.Optional(Code),
    ticketId: Type.Optional(Id),
    direction: Type.Optional(Type.Union([Type.Literal('in'), Type.Literal('out')], { description: 'Check-in (default) or check-out' })),
    ...scanFields,
    offline: Type.Optional(
      Type.Boolean({
        description: 'true: decided by an offline device (`decision`), recorded as made, never decided again; needs `scannedAt`, `nonce` and `decision`',
      }),
    ),
    decision: Type.Optional(
      Type.Union([Type.Literal('admitted'), Type.Literal('denied')], { description: 'Offline scans: what the device decided (for a check-out: let out, or not)' }),
    ),
    reason: Type.Optional(Type.Union(DENIAL_REASONS.map((r) => Type.Literal(r)), { description: 'Offline scans denied: the device\'s denial reason' })),
  },
  { additionalProperties: false },
);
export const BatchBody = Type.Object({ scans: Type.Array(BatchScan, { minItems: 1, maxItems: 500 }) }, { additionalProperties: false });

export const ScanResult = Type.Object({
  success: Type.Boolean(),
  reason: Type.Optional(Reason),
  ticket: Type.Optional(TicketSchema),
});

export const BatchItemResult = Type.Object({
  success: Type.Boolean({ description: 'Allowed (offline: the device admitted it); false for a denial or a bad item (`error`)' }),
  reason: Type.Optional(Reason),
  ticket: Type.Optional(TicketSchema),
  offline: Type.Optional(Type.Boolean({ description: 'An offline scan: the device\'s decision, recorded as made' })),
  ticketId: Type.Optional(Type.String({ description: 'Offline scans: the ticket the code matched (its answer carries no `ticket`)' })),
  conflict: Type.Optional(Type.Boolean({ description: 'An offline admission the server would have refused: a double entry, a revoked ticket (`conflictReason`)' })),
  conflictReason: Type.Optional(Type.Union(DENIAL_REASONS.map((r) => Type.Literal(r)), { description: 'What the server would have answered' })),
  error: Type.Optional(
    Type.Object(
      { statusCode: Type.Integer(), error: Type.String(), message: Type.String() },
      { description: 'A bad item (an offline scan naming an unknown zone or list, a future `scannedAt`, …), answered in its slot; the other scans commit' },
    ),
  ),
});

export const BatchResult = Type.Object({ results: Type.Array(BatchItemResult, { description: 'In the order of the scans sent' }) });

export const ValidateBody = Type.Object(
  { code: Code, eventId: scanFields.eventId, listId: scanFields.listId, zone: scanFields.zone },
  { additionalProperties: false },
);
export const ValidateResult = Type.Object({
  valid: Type.Boolean(),
  reason: Type.Optional(Reason),
  ticket: Type.Optional(TicketSchema),
});

const Counts = Type.Object({ total: Type.Integer(), successful: Type.Integer(), denied: Type.Integer() });

export const CheckinStats = Type.Object({
  total: Type.Integer({ description: 'Check-in scans, allowed or denied (repeats included)' }),
  successful: Type.Integer(),
  denied: Type.Integer(),
  uniqueAttendees: Type.Integer({ description: 'Tickets that ever checked in (people, not scans)' }),
  byZone: Type.Record(Type.String(), Counts, { description: 'Check-in scans per zone id; no zone: `unknown`' }),
  byHour: Type.Record(Type.String(), Counts, { description: 'Check-in scans per UTC hour (ISO start of the hour), by scan time' }),
  byReason: Type.Record(Type.String(), Type.Integer(), { description: 'Denied check-ins per reason' }),
  checkouts: Counts,
  inside: Type.Integer({ description: 'Tickets inside now (a ticket inside on two lists counts once)' }),
  byCheckpoint: Type.Record(Type.String(), Type.Integer(), { description: 'Successful entries per checkpoint (scans naming one), net of annulments' }),
  byDevice: Type.Record(Type.String(), Type.Integer(), { description: 'Successful entries per device id (scans naming one), net of annulments' }),
  conflicts: Type.Integer({ description: 'Offline admissions the server would have refused (double entries, revoked tickets), counted in `successful` too' }),
  byList: Type.Record(
    Type.String(),
    Type.Object({
      name: Type.String(),
      total: Type.Integer({ description: 'Check-in scans at the list, allowed or denied' }),
      successful: Type.Integer(),
      denied: Type.Integer(),
      uniqueAttendees: Type.Integer({ description: 'Tickets that ever entered on the list' }),
      checkouts: Counts,
      inside: Type.Integer({ description: 'Tickets inside on the list now' }),
      conflicts: Type.Optional(Type.Integer({ description: 'Offline admissions on the list the server would have refused; absent when none' })),
    }),
    { description: 'Per check-in list id (empty for an event without lists)' },
  ),
});

// --- Check-in lists ---------------------------------------------------------------------------

export const MAX_LIST_NAME = 120;

const ListRules = Type.Object(
  {
    validFrom: Type.Optional(Type.String({ format: 'date-time', description: 'No entry before this instant (`invalid_time`)' })),
    validUntil: Type.Optional(Type.String({ format: 'date-time', description: 'No entry after this instant (`invalid_time`)' })),
    maxEntries: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000, description: 'Successful entries a ticket may make on the list (`max_entries`)' })),
    maxEntriesPerDay: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 1_000_000, description: 'Successful entries per local day, in the event\'s time zone (`max_entries`)' }),
    ),
    weekdays: Type.Optional(
      Type.Array(Type.Integer({ minimum: 1, maximum: 7 }), { minItems: 1, maxItems: 7, description: 'ISO weekdays (1 Monday … 7 Sunday) of the event\'s time zone with entry (`invalid_time` on others)' }),
    ),
  },
  { additionalProperties: false },
);

const listFields = {
  ticketTypeIds: Type.Optional(
    Type.Union([Type.Array(Id, { minItems: 1, maxItems: 200 }), Type.Null()], { description: 'Ticket types admitted (others: `product`); absent or null: every type' }),
  ),
  zones: Type.Optional(
    Type.Union([Type.Array(Type.String({ pattern: ZONE_ID }), { minItems: 1, maxItems: 100 }), Type.Null()], {
      description: 'Zones the list serves (a scan at another zone is a 400); absent or null: every zone. With one zone, a scan naming none is at it',
    }),
  ),
  allowReentry: Type.Optional(
    Type.Union([Type.Boolean(), Type.Null()], { description: 'After a check-out on the list, may the ticket enter again; absent or null: as the event says' }),
  ),
  allowMultipleEntries: Type.Optional(
    Type.Boolean({ description: 'A ticket inside may be let in again without a check-out in between, each scan an entry (default false)' }),
  ),
  exitAllAt: Type.Optional(
    Type.Union([Type.String({ pattern: '^([01][0-9]|2[0-3]):[0-5][0-9]$' }), Type.Null()], {
      description: 'Local time `HH:MM` in the event\'s time zone at which, every day, everyone inside on the list is checked out (logged as check-outs by `system`); null: never',
    }),
  ),
  rules: Type.Optional(ListRules),
};

export const CheckinListCreate = Type.Object({ name: Type.String({ minLength: 1, maxLength: MAX_LIST_NAME }), ...listFields }, { additionalProperties: false });
export const CheckinListUpdate = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: MAX_LIST_NAME })),
    ...listFields,
    version: Type.Optional(Type.Integer({ minimum: 1, description: 'The version read; a stale one is a 409' })),
  },
  { additionalProperties: false },
);
export const ListParams = Type.Object({ listId: Id });
export const StatsQuery = Type.Object({ listId: Type.Optional(Type.String({ pattern: HEX24, description: 'Narrow to this check-in list of the event' })) });

export const ZoneOccupancy = Type.Object({
  zoneId: Type.String(),
  zoneName: Type.String(),
  capacity: Type.Union([Type.Integer(), Type.Null()]),
  currentOccupancy: Type.Integer({ description: 'Entries minus exits, never below 0' }),
  availableCapacity: Type.Union([Type.Integer(), Type.Null()]),
  percentFull: Type.Union([Type.Number(), Type.Null()]),
  totalEntranceScans: Type.Integer({ description: 'Successful entries into the zone' }),
  totalEligibilityScans: Type.Integer({ description: 'Every check-in attempt at the zone, allowed or denied' }),
});
export const Occupancy = Type.Record(Type.String(), ZoneOccupancy, { description: 'Keyed by zone id; `unknown` is never listed' });

// --- Tickets ------------------------------------------------------------------------------

export const IssueItem = Type.Object(
  {
    ticketTypeId: Id,
    quantity: Type.Integer({ minimum: 1, maximum: 500 }),
    holderEmail: Email,
    holderName: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  },
  { additionalProperties: false },
);

export const TicketList = ListOf(TicketSchema);

export const IssueResult = Type.Object({
  tickets: Type.Array(TicketSchema),
  order: Type.Optional(RecordSchema),
  payment: Type.Optional(Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()])),
  checkins: Type.Optional(Type.Array(ScanResult)),
});

// --- Undo and the scan log ----------------------------------------------------------------------

const SCAN_ID = '^[0-9a-f]{24}-[1-9][0-9]{0,14}$';

export const AnnulBody = Type.Object(
  {
    scanId: Type.Optional(Type.String({ pattern: SCAN_ID, description: 'The scan\'s `id` in the scan log (`GET /events/:id/scans`)' })),
    nonce: Type.Optional(Type.String({ minLength: 1, maxLength: 128, description: 'The `nonce` the scan was sent with (with `eventId` or `listId`)' })),
    eventId: Type.Optional(Type.String({ minLength: 1, maxLength: 80, description: 'Event id or slug of the scan named by `nonce`' })),
    listId: Type.Optional(Type.String({ pattern: HEX24, description: 'Or the check-in list of the scan named by `nonce` (its event)' })),
  },
  { additionalProperties: false },
);

export const ScanLogItem = Type.Object({
  id: Type.String({ description: '`<eventId>-<sequence>`: names the scan to `POST /events/checkin/annul`' }),
  at: Type.String({ format: 'date-time', description: 'When the scan was made (an offline scan\'s `scannedAt`)' }),
  kind: Type.Union([Type.Literal('in'), Type.Literal('out'), Type.Literal('annul')], { description: 'Check-in, check-out, or the annulment of an earlier scan (`annuls`)' }),
  ticketId: Type.Union([Type.String(), Type.Null()], { description: 'null: the code matched no ticket' }),
  success: Type.Boolean(),
  reason: Type.Union([Type.String(), Type.Null()], { description: 'Why it was refused (the denial reasons of the scan routes)' }),
  zone: Type.String(),
  checkpoint: Type.Union([Type.String(), Type.Null()]),
  listId: Type.Union([Type.String(), Type.Null()]),
  deviceId: Type.Union([Type.String(), Type.Null()]),
  by: Type.Union([Type.String(), Type.Null()], { description: 'Who made it: the user, device or application id; `system` for an automatic check-out' }),
  nonce: Type.Union([Type.String(), Type.Null()]),
  offline: Type.Boolean({ description: 'Made offline and uploaded later' }),
  conflict: Type.Boolean({ description: 'An offline admission the server would have refused (it counts as an entry)' }),
  conflictReason: Type.Union([Type.String(), Type.Null()], { description: 'Why the server would have refused it (a denial reason)' }),
  annulled: Type.Boolean({ description: 'An annulment reversed it: it counts nowhere' }),
  annuls: Type.Optional(Type.String({ description: 'An annulment: the id of the scan it reversed' })),
});

export const AnnulResult = Type.Object({
  scan: ScanLogItem,
  annulment: ScanLogItem,
});

export const ScansQuery = Type.Object(
  {
    listId: Type.Optional(Type.String({ pattern: HEX24 })),
    deviceId: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
    checkpoint: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    zone: Type.Optional(Type.String({ pattern: ZONE_ID })),
    success: Type.Optional(Type.Boolean()),
    reason: Type.Optional(Type.String({ minLength: 1, maxLength: 32 })),
    conflict: Type.Optional(Type.Boolean({ description: 'true: only offline admissions in conflict; false: the others' })),
    since: Type.Optional(Type.String({ format: 'date-time', description: 'Scans received at or after this instant' })),
    after: Type.Optional(Type.String({ pattern: '^[0-9]{1,15}$', description: 'The `next` of the previous page' })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, description: 'Scans per page (default 100)' })),
  },
  { additionalProperties: false },
);

export const ScanLogPage = Type.Object({
  data: Type.Array(ScanLogItem),
  next: Type.Union([Type.String(), Type.Null()], { description: 'The cursor of the next page (`after`); null: the end of the log' }),
});
