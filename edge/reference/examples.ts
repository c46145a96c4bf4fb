// Hand-written examples for the flows a newcomer starts with, keyed by `METHOD /path` as the route
// table writes it. They are one story (an organisation signs up, keeps a note, runs an event, scans a
// ticket, opens a bar tab), so the ids agree across operations: the reference runner and the test
// that sends every one of these to a live server (test/reference/examples.test.ts) swap each
// placeholder id for the live one an earlier answer gave. Every other operation gets an example
// generated from its schemas (example-values.ts).

export interface HandExample {
  /** Short name of the example (an OpenAPI `examples` key). */
  name: string;
  summary: string;
  params?: Record<string, string>;
  query?: Record<string, string | number | boolean>;
  body?: unknown;
  status: number;
  response: unknown;
  /** Credentials the request needs, from the sign-up answer. */
  auth?: 'staff';
}

/** The story's ids: each is replaced by the live one once an answer has given it. */
export const IDS = {
  orgId: 'lovelace-events-7k2p9q',
  userId: '665f1c2ab4d3e8f9a0b1c201',
  note: '665f1c2ab4d3e8f9a0b1c202',
  event: '665f1c2ab4d3e8f9a0b1c203',
  ticketType: '665f1c2ab4d3e8f9a0b1c204',
  ticket: '665f1c2ab4d3e8f9a0b1c205',
  ticketNumber: 'JZ7Q4K2M9P',
  list: '665f1c2ab4d3e8f9a0b1c20c',
  device: '665f1c2ab4d3e8f9a0b1c20d',
  initToken: 'bpdi_Q2hlY2staW4gc2Nhbm5lciBleGFtcGxlIGluaXQgdGs',
  deviceToken: 'bpd_U2Nhbm5lciBkZXZpY2UgZXhhbXBsZSB0b2tlbiAgeHk',
  location: '665f1c2ab4d3e8f9a0b1c206',
  tab: '665f1c2ab4d3e8f9a0b1c207',
  line: '665f1c2ab4d3e8f9a0b1c208',
  payment: '665f1c2ab4d3e8f9a0b1c209',
  message: '665f1c2ab4d3e8f9a0b1c20a',
  customer: '665f1c2ab4d3e8f9a0b1c20b',
  customerToken: 'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJvcmciOiJsb3ZlbGFjZS1ldmVudHMtN2sycDlxIiwia2luZCI6ImN1c3RvbWVyIn0.c2lnbmF0dXJlLWN1c3RvbWVy',
  customerRefreshToken: 'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJvcmciOiJsb3ZlbGFjZS1ldmVudHMtN2sycDlxIiwidHlwIjoiY3VzdG9tZXItcmVmcmVzaCJ9.c2lnbmF0dXJlLWN1c3RvbWVyLXJlZnJlc2g',
  accessToken: 'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJvcmciOiJsb3ZlbGFjZS1ldmVudHMtN2sycDlxIiwidHlwIjoiYWNjZXNzIn0.c2lnbmF0dXJlLWFjY2Vzcw',
  refreshToken: 'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJvcmciOiJsb3ZlbGFjZS1ldmVudHMtN2sycDlxIiwidHlwIjoicmVmcmVzaCJ9.c2lnbmF0dXJlLXJlZnJlc2g',
} as const;

const T0 = '2026-09-14T09:30:00.000Z';
const user = {
  id: IDS.userId,
  kind: 'staff',
  orgId: IDS.orgId,
  roles: ['User', 'Admin', 'ConfigAdmin'],
  createdate: T0,
  email: 'ada@example.com',
  name: 'Ada Lovelace',
  status: 'active',
  isPrimaryContact: true,
  emailVerified: false,
};
const session = {
  token: IDS.accessToken,
  refreshToken: IDS.refreshToken,
  tokenType: 'Bearer',
  expiresIn: 900,
  orgId: IDS.orgId,
  user,
  // Send it back as x-device-token: the device's next passcode sign-in needs no orgid.
  deviceToken: `${IDS.orgId}.Q2FzdGxlLWRldmljZS10b2tlbi1leGFtcGxlLTAwMDAwMDA`,
};
const record = (sk: string, datatype: string, state: string, data: Record<string, unknown>, version = 1, at = T0) => ({
  pk: IDS.orgId,
  sk,
  datatype,
  version,
  state,
  createdate: at,
  modifydate: at,
  data,
});

const note = record(IDS.note, 'bm_note', 'new', { title: 'Call the caterer', done: false }, 1, '2026-09-14T09:31:00.000Z');
const event = record(
  IDS.event,
  'event',
  'new',
  {
    name: 'Autumn Jazz Night',
    slug: 'autumn-jazz-night',
    startDate: '2026-10-03T19:00:00.000Z',
    endDate: '2026-10-03T23:00:00.000Z',
    timezone: 'Europe/London',
    venue: 'The Old Mill',
    currency: 'GBP',
    capacity: null,
    zones: [{ id: 'main-hall', name: 'Main hall', capacity: 300 }],
    allowReentry: true,
    codeWindowSeconds: 30,
    codeSkewSeconds: 60,
    status: 'draft',
    createdBy: IDS.userId,
  },
  1,
  '2026-09-14T09:32:00.000Z',
);
const ticketType = record(
  IDS.ticketType,
  'ticket_type',
  'active',
  { event: IDS.event, title: 'General admission', price: 25, quantity: null, perks: [], requiresActivation: false },
  1,
  '2026-09-14T09:32:00.000Z',
);
const ticketData = {
  event: IDS.event,
  ticketTypeId: IDS.ticketType,
  ticketTypeTitle: 'General admission',
  number: IDS.ticketNumber,
  holderEmail: 'grace@example.com',
  holderName: 'Grace Hopper',
  status: 'valid',
  currency: 'GBP',
  source: 'create',
  price: 25,
  requiresActivation: false,
  issuedBy: IDS.userId,
};
const ticket = record(IDS.ticket, 'ticket', 'valid', ticketData, 1, '2026-09-14T09:33:00.000Z');
const scanned = {
  ...record(
    IDS.ticket,
    'ticket',
    'checked_in',
    { ...ticketData, status: 'checked_in', zone: 'main-hall', checkedInAt: '2026-10-03T19:04:12.000Z', lastCheckInAt: '2026-10-03T19:04:12.000Z', inside: true },
    2,
    '2026-09-14T09:33:00.000Z',
  ),
  modifydate: '2026-10-03T19:04:12.000Z',
};
const list = record(
  IDS.list,
  'checkin_list',
  'active',
  {
    event: IDS.event,
    name: 'Main hall door',
    ticketTypeIds: null,
    zones: ['main-hall'],
    allowReentry: null,
    allowMultipleEntries: false,
    exitAllAt: '03:00',
    rules: { validFrom: null, validUntil: null, maxEntries: null, maxEntriesPerDay: null, weekdays: null },
    createdBy: IDS.userId,
  },
  1,
  '2026-09-14T09:34:00.000Z',
);
/** The story's scanner device, as the device routes answer it. */
const device = (fields: Record<string, unknown>) => ({
  sk: IDS.device,
  name: 'Side door scanner',
  status: 'active',
  eventIds: [IDS.event],
  listId: IDS.list,
  checkpoint: 'side-door',
  hardwareId: 'ipad-DMPX2',
  createdAt: '2026-10-03T18:30:00.000Z',
  createdBy: IDS.userId,
  initExpiresAt: null,
  initializedAt: '2026-10-03T18:31:00.000Z',
  lastSeenAt: null,
  scanCount: 0,
  revokedAt: null,
  ...fields,
});
/** A scan as the scan log lists it: the story's event, its `seq`th scan. */
const logged = (seq: number, at: string, fields: Record<string, unknown>) => ({
  id: `${IDS.event}-${seq}`,
  at,
  kind: 'in',
  ticketId: IDS.ticket,
  success: true,
  reason: null,
  zone: 'main-hall',
  checkpoint: null,
  listId: null,
  deviceId: null,
  by: IDS.userId,
  nonce: null,
  offline: false,
  conflict: false,
  conflictReason: null,
  annulled: false,
  ...fields,
});
const noCounts = { total: 0, successful: 0, denied: 0 };
const line = {
  lineId: IDS.line,
  name: 'Flat white',
  quantity: 2,
  unitPrice: 3.4,
  modifiers: [],
  taxRate: 0,
  subtotal: 6.8,
  tax: 0,
  total: 6.8,
  addedAt: '2026-09-14T10:01:00.000Z',
};
const tabData = {
  orderNumber: 1001,
  businessLocationId: 'main',
  tabLabel: 'Window table',
  openedAt: '2026-09-14T10:00:00.000Z',
  openedBy: IDS.userId,
  status: 'open',
  currency: 'USD',
  productItems: [] as unknown[],
  subtotal: 0,
  tax: 0,
  tip: 0,
  total: 0,
  amountPaid: 0,
  amountRefunded: 0,
  balanceDue: 0,
  changeDue: 0,
  payments: [] as unknown[],
};
const payment = {
  id: IDS.payment,
  type: 'payment',
  method: 'cash',
  amount: 10,
  status: 'succeeded',
  at: '2026-09-14T10:05:00.000Z',
  by: IDS.userId,
  applied: 6.8,
  change: 3.2,
  tip: 0,
  refunded: 0,
};
const withItem = { ...tabData, productItems: [line], subtotal: 6.8, total: 6.8, balanceDue: 6.8 };

/** In the order a newcomer runs them; each may use ids the answers before it gave. */
export const FLOW: ReadonlyArray<readonly [string, HandExample]> = [
  [
    'POST /profile/user/signup',
    {
      name: 'signUp',
      summary: 'Sign up: a new organisation and its first staff user (an Admin)',
      body: { email: 'ada@example.com', password: 'correct-horse-battery', name: 'Ada Lovelace', orgName: 'Lovelace Events' },
      status: 201,
      response: session,
    },
  ],
  [
    'POST /profile/user/signin',
    {
      name: 'signIn',
      summary: 'Sign in with email and password (the orgid header names the organisation)',
      body: { email: 'ada@example.com', password: 'correct-horse-battery' },
      status: 200,
      response: session,
    },
  ],
  [
    'POST /profile/customer/verify-email/send',
    {
      name: 'sendVerification',
      summary: 'Ask for a code that proves your email (the sign-up answered emailVerified: false)',
      auth: 'staff',
      status: 200,
      response: {
        sent: true,
        emailVerified: false,
        message: 'A verification code was sent to ada@example.com; post it to /profile/customer/verify-email within 10 minutes.',
      },
    },
  ],
  [
    'POST /profile/password/forgot',
    {
      name: 'forgotPassword',
      summary: 'Ask for a reset code: the same answer whether or not an account uses the address',
      body: { email: 'ada@example.com' },
      status: 200,
      response: { message: 'If an account in this organisation uses this email, a reset code was sent to it; it expires in 10 minutes.' },
    },
  ],
  [
    'POST /repository/create',
    {
      name: 'createNote',
      summary: 'Keep a record of your own kind (`bm_note`)',
      auth: 'staff',
      body: { datatype: 'bm_note', isNew: true, data: { title: 'Call the caterer', done: false } },
      status: 201,
      response: note,
    },
  ],
  [
    'POST /repository/find/:datatype',
    {
      name: 'findOpenNotes',
      summary: 'Find records with a MongoDB filter, one page at a time',
      auth: 'staff',
      params: { datatype: 'bm_note' },
      body: { query: { 'data.done': false }, options: { page: 1, pageSize: 20, sort: 'createdate', sortType: 'desc' } },
      status: 200,
      response: { data: [note], total: 1, hasNext: false, page: 1, pageSize: 20 },
    },
  ],
  [
    'POST /events',
    {
      name: 'eventWithZone',
      summary: 'An event with one scanning zone and one ticket type',
      auth: 'staff',
      body: {
        name: 'Autumn Jazz Night',
        startDate: '2026-10-03T19:00:00.000Z',
        endDate: '2026-10-03T23:00:00.000Z',
        timezone: 'Europe/London',
        venue: 'The Old Mill',
        currency: 'GBP',
        zones: [{ id: 'main-hall', name: 'Main hall', capacity: 300 }],
        ticketTypes: [{ title: 'General admission', price: 25 }],
      },
      status: 201,
      response: { ...event, ticketTypes: [ticketType] },
    },
  ],
  [
    'POST /events/:id/tickets',
    {
      name: 'issueTicket',
      summary: 'Issue a ticket of that type to a guest',
      auth: 'staff',
      params: { id: IDS.event },
      body: { ticketTypeId: IDS.ticketType, holderEmail: 'grace@example.com', holderName: 'Grace Hopper' },
      status: 201,
      response: ticket,
    },
  ],
  [
    'POST /events/checkin',
    {
      name: 'scanAdmitted',
      summary: 'Scan the ticket at the main-hall door: admitted',
      auth: 'staff',
      body: { code: IDS.ticketNumber, zone: 'main-hall', eventId: IDS.event, checkpoint: 'north-door' },
      status: 200,
      response: { success: true, ticket: scanned },
    },
  ],
  [
    'POST /events/checkin',
    {
      name: 'scanDenied',
      summary: 'The same ticket scanned again: denied, with the reason',
      auth: 'staff',
      body: { code: IDS.ticketNumber, zone: 'main-hall', eventId: IDS.event, checkpoint: 'north-door' },
      status: 200,
      response: { success: false, reason: 'already_checked_in', ticket: scanned },
    },
  ],
  [
    'POST /events/:id/checkin-lists',
    {
      name: 'createList',
      summary: 'A check-in list for the main-hall door that checks everyone out at 03:00',
      auth: 'staff',
      params: { id: IDS.event },
      body: { name: 'Main hall door', zones: ['main-hall'], exitAllAt: '03:00' },
      status: 201,
      response: list,
    },
  ],
  [
    'GET /events/:id/checkin-lists',
    {
      name: 'eventLists',
      summary: 'The check-in lists of the event',
      auth: 'staff',
      params: { id: IDS.event },
      status: 200,
      response: { data: [list], total: 1, hasNext: false, page: 1, pageSize: 20 },
    },
  ],
  [
    'POST /events/checkin',
    {
      name: 'scanAtList',
      summary: 'Scan at the list: its own door state, so the ticket inside the event enters the list too',
      auth: 'staff',
      body: { code: IDS.ticketNumber, listId: IDS.list, checkpoint: 'side-door' },
      status: 200,
      response: { success: true, ticket: { ...scanned, data: { ...scanned.data, lastCheckInAt: '2026-10-03T19:06:40.000Z' } } },
    },
  ],
  [
    'GET /events/:id/scans',
    {
      name: 'scanLog',
      summary: 'The scan log of the event, in log order: refused scans too (filters narrow it, `next` pages on)',
      auth: 'staff',
      params: { id: IDS.event },
      status: 200,
      response: {
        data: [
          logged(1, '2026-10-03T19:04:12.000Z', { checkpoint: 'north-door' }),
          logged(2, '2026-10-03T19:05:30.000Z', { checkpoint: 'north-door', success: false, reason: 'already_checked_in' }),
          logged(3, '2026-10-03T19:06:40.000Z', { checkpoint: 'side-door', listId: IDS.list }),
        ],
        next: null,
      },
    },
  ],
  [
    'POST /events/checkin/annul',
    {
      name: 'annulScan',
      summary: 'Undo the scan at the list (its maker, within DOOR_ANNUL_WINDOW_S): as if it never happened',
      auth: 'staff',
      body: { scanId: `${IDS.event}-3` },
      status: 200,
      response: {
        scan: logged(3, '2026-10-03T19:06:40.000Z', { checkpoint: 'side-door', listId: IDS.list, annulled: true }),
        annulment: logged(4, '2026-10-03T19:07:05.000Z', { kind: 'annul', checkpoint: 'side-door', listId: IDS.list, annuls: `${IDS.event}-3` }),
      },
    },
  ],
  [
    'GET /events/:id/checkin-stats',
    {
      name: 'doorFigures',
      summary: 'The door figures: the annulled scan counts nowhere',
      auth: 'staff',
      params: { id: IDS.event },
      status: 200,
      response: {
        total: 2,
        successful: 1,
        denied: 1,
        uniqueAttendees: 1,
        byZone: { 'main-hall': { total: 2, successful: 1, denied: 1 } },
        byHour: { '2026-10-03T19:00:00.000Z': { total: 2, successful: 1, denied: 1 } },
        byReason: { already_checked_in: 1 },
        checkouts: noCounts,
        inside: 1,
        byCheckpoint: { 'north-door': 1 },
        byDevice: {},
        conflicts: 0,
        byList: { [IDS.list]: { name: 'Main hall door', total: 0, successful: 0, denied: 0, uniqueAttendees: 0, checkouts: noCounts, inside: 0 } },
      },
    },
  ],
  [
    'POST /events/devices',
    {
      name: 'enrollDevice',
      summary: "Enroll the side door's scanner (Admin): for the event's list, at its checkpoint; the token is shown once",
      auth: 'staff',
      body: { name: 'Side door scanner', eventIds: [IDS.event], listId: IDS.list, checkpoint: 'side-door' },
      status: 201,
      response: { sk: IDS.device, initToken: IDS.initToken, initExpiresAt: '2026-10-04T18:30:00.000Z' },
    },
  ],
  [
    'POST /events/devices/initialize',
    {
      name: 'initializeDevice',
      summary: 'The scanner trades its one-time token for its own (no credential; send it as `Authorization: Device <token>`)',
      body: { initToken: IDS.initToken, hardwareId: 'ipad-DMPX2' },
      status: 200,
      response: { deviceId: IDS.device, token: IDS.deviceToken, device: device({}) },
    },
  ],
  [
    'GET /events/:id/door-keys',
    {
      name: 'doorKeys',
      summary: "The event's public keys: a scanner checks QR codes with them when the network is gone",
      auth: 'staff',
      params: { id: IDS.event },
      status: 200,
      response: {
        eventId: IDS.event,
        activeKid: 'k7Qm2xZa',
        keys: [{ kid: 'k7Qm2xZa', alg: 'Ed25519', publicKey: 'Wq1nF0bZk3s8yXJ2v4eTt6uQ9rLmH5cA7dPg2oKiE0M', createdAt: '2026-10-03T18:20:00.000Z', retiredAt: null }],
      },
    },
  ],
  [
    'GET /events/devices',
    {
      name: 'listDevices',
      summary: 'The enrolled scanners, with when each was last seen and how many scans it made',
      auth: 'staff',
      status: 200,
      response: { data: [device({})], total: 1, hasNext: false, page: 1, pageSize: 20 },
    },
  ],
  [
    'POST /events/devices/:id/revoke',
    {
      name: 'revokeDevice',
      summary: 'A lost scanner: revoked, its token refused from now on (on every node within seconds)',
      auth: 'staff',
      params: { id: IDS.device },
      status: 200,
      response: device({ status: 'revoked', revokedAt: '2026-10-03T23:10:00.000Z' }),
    },
  ],
  [
    'POST /repository/create',
    {
      name: 'createLocation',
      summary: 'A business location (`location`): tabs are opened at one, by its `data.name`',
      auth: 'staff',
      body: { datatype: 'location', isNew: true, data: { name: 'main', title: 'Main bar' } },
      status: 201,
      response: record(IDS.location, 'location', 'new', { name: 'main', title: 'Main bar' }, 1, '2026-09-14T09:59:00.000Z'),
    },
  ],
  [
    'POST /storefront/pos/tab',
    {
      name: 'openTab',
      summary: 'Open a bar tab at the `main` location',
      auth: 'staff',
      body: { businessLocationId: 'main', tabLabel: 'Window table' },
      status: 201,
      response: { ...record(IDS.tab, 'sf_order', 'open', tabData, 1, '2026-09-14T10:00:00.000Z'), amountPaid: 0 },
    },
  ],
  [
    'POST /storefront/order/:id/items',
    {
      name: 'addItem',
      summary: 'Add two flat whites; money may be a number or a decimal string',
      auth: 'staff',
      params: { id: IDS.tab },
      body: [{ name: 'Flat white', quantity: 2, unitPrice: '3.40' }],
      status: 200,
      response: { ...record(IDS.tab, 'sf_order', 'open', withItem, 2, '2026-09-14T10:00:00.000Z'), modifydate: '2026-09-14T10:01:00.000Z', amountPaid: 0 },
    },
  ],
  [
    'POST /storefront/pos/tab/:id/settle',
    {
      name: 'settleCash',
      summary: 'Settle with 10.00 in cash: the tab closes and 3.20 change is due',
      auth: 'staff',
      params: { id: IDS.tab },
      body: { amount: '10.00', method: 'cash' },
      status: 200,
      response: {
        order: {
          ...record(
            IDS.tab,
            'sf_order',
            'closed',
            { ...withItem, status: 'closed', amountPaid: 6.8, balanceDue: 0, changeDue: 3.2, payments: [payment], closedAt: payment.at, closedBy: IDS.userId },
            3,
            '2026-09-14T10:00:00.000Z',
          ),
          modifydate: payment.at,
          amountPaid: 6.8,
        },
        transaction: payment,
      },
    },
  ],
  [
    'POST /profile/customer/signup',
    {
      name: 'customerSignUp',
      summary: 'A customer (a guest) signs up to the organisation named by the orgid header',
      body: { email: 'grace@example.com', password: 'correct-horse-battery', name: 'Grace Hopper' },
      status: 201,
      response: {
        token: IDS.customerToken,
        refreshToken: IDS.customerRefreshToken,
        tokenType: 'Bearer',
        expiresIn: 900,
        orgId: IDS.orgId,
        user: {
          id: IDS.customer,
          kind: 'customer',
          orgId: IDS.orgId,
          roles: [],
          createdate: '2026-09-14T10:08:00.000Z',
          email: 'grace@example.com',
          name: 'Grace Hopper',
          status: 'active',
          customerId: IDS.customer,
          emailVerified: false,
        },
      },
    },
  ],
  [
    'POST /client/community/messages',
    {
      name: 'directMessage',
      summary: 'A direct chat message to another member',
      auth: 'staff',
      body: { to: IDS.customer, text: 'Doors open at 18:30.', clientId: 'msg-0001' },
      status: 201,
      response: {
        id: IDS.message,
        seq: 1,
        threadId: `d:${IDS.userId}:${IDS.customer}`,
        to: IDS.customer,
        from: { id: IDS.userId, email: 'ada@example.com' },
        text: 'Doors open at 18:30.',
        at: '2026-09-14T10:10:00.000Z',
        clientId: 'msg-0001',
      },
    },
  ],
];

/** The server-sent event streams: what arrives, as a client reads it. */
export const STREAMS: Record<string, { description: string; example: string }> = {
  'GET /ai/stream/:streamId': {
    description:
      'A `text/event-stream`. First `retry: 2000`; then one event per chunk, `id: <index>` and `data: {"index","chunk"}`; ' +
      'then `event: done` with `data: {"streamId","chatId",...}` (or `event: error`). A `: heartbeat` comment keeps the ' +
      'connection open. Reconnect with `Last-Event-ID: <index>` to resume after that chunk.',
    example:
      'retry: 2000\n\nid: 0\ndata: {"index":0,"chunk":"Doors "}\n\nid: 1\ndata: {"index":1,"chunk":"open at 18:30."}\n\n' +
      `event: done\ndata: {"streamId":"665f1c2ab4d3e8f9a0b1c2b0","chatId":"665f1c2ab4d3e8f9a0b1c2b1"}\n\n`,
  },
  'GET /events/:id/door/stream': {
    description:
      'A `text/event-stream`. First `retry: 2000`; then `event: door` with the whole door as one `data:` line, at once and ' +
      'within a second of every scan of the event (a rush coalesced to a few a second): `zones`, `inside`, `scans`, ' +
      '`admitted`, `denied`, `checkouts`, `rate` (60 one-minute counts per checkpoint, oldest first), `denials`, ' +
      '`conflicts`, `devices`. A `: heartbeat` comment keeps the connection open; `event: end` `{"reason":"token_expired"}` ' +
      'when the access token expires. Each event replaces the last: there is nothing to resume.',
    example:
      'retry: 2000\n\nevent: door\ndata: {"eventId":"665f1c2ab4d3e8f9a0b1c2a0","eventName":"Spring Gala","at":"2026-09-14T18:42:07.120Z",' +
      '"zones":[{"zoneId":"main","zoneName":"Main hall","capacity":400,"inside":212,"percentFull":53}],"inside":212,"scans":240,' +
      '"admitted":231,"denied":9,"checkouts":19,"rate":{"from":"2026-09-14T17:43:00.000Z","minutes":60,"checkpoints":' +
      '[{"checkpoint":"Gate A","perMinute":[0,0,"… 60 counts …",14,9],"total":180}]},"denials":{"already_checked_in":6,"invalid_code":3},' +
      '"conflicts":0,"devices":[{"id":"665f1c2ab4d3e8f9a0b1c2d0","name":"Gate A scanner","enrolled":true,' +
      '"lastSeenAt":"2026-09-14T18:42:05.000Z","scanCount":190,"entries":180}]}\n\n',
  },
};

/**
 * Examples that need what only an inbox holds (a code sent to it), so the live story cannot send
 * them: they are checked against their schemas only.
 */
export const INBOX_EXAMPLES: ReadonlyArray<readonly [string, HandExample]> = [
  [
    'POST /profile/customer/verify-email',
    {
      name: 'verifyEmail',
      summary: 'Prove the address with the 6-digit code from the message (kind verify-email)',
      auth: 'staff',
      body: { code: '482913' },
      status: 200,
      response: { emailVerified: true },
    },
  ],
  [
    'POST /profile/password/reset',
    {
      name: 'resetPassword',
      summary: 'Set a new password with the code from the message (kind password-reset); every earlier session of the account ends',
      body: { email: 'ada@example.com', code: '105724', newPassword: 'a-new-long-passphrase' },
      status: 200,
      response: { reset: true, emailVerified: true, accounts: 1 },
    },
  ],
];

const byKey = new Map<string, HandExample[]>();
for (const [key, ex] of [...FLOW, ...INBOX_EXAMPLES]) byKey.set(key, [...(byKey.get(key) ?? []), ex]);

export function handExamples(method: string, path: string): HandExample[] {
  return byKey.get(`${method} ${path}`) ?? [];
}
