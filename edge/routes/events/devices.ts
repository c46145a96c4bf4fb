// Enrolled scanner devices (issue 31): enrolment by an Admin, the device's one-time initialization,
// the list and revocation. The device credential itself is resolved by actors/devices (registered
// in edge/modules/events.ts) and admitted only on routes that set `device` (edge/route.ts).
import { Type, type Static } from '@sinclair/typebox';
import type { Enrolment, ScannerDevices } from '../../../actors/devices/index.js';
import type { EventsApi } from '../../../actors/events/index.js';
import { appError } from '../../../core/errors.js';
import type { AppDeps } from '../../deps.js';
import { route, type RouteDef } from '../../route.js';
import { doorFree } from './door-wait.js';
import { EventRef, Id, ListOf, Paging } from './schemas.js';

const TAG = 'Scanner devices';
const ADMIN = ['Admin'];
const Nullable = <T extends ReturnType<typeof Type.String>>(s: T) => Type.Union([s, Type.Null()]);

const Checkpoint = Type.String({ minLength: 1, maxLength: 100 });

const EnrollBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    eventIds: Type.Optional(Type.Array(EventRef, { minItems: 1, maxItems: 100, uniqueItems: true })),
    listId: Type.Optional(Id),
    checkpoint: Type.Optional(Checkpoint),
  },
  { additionalProperties: false },
);

const InitBody = Type.Object(
  {
    initToken: Type.String({ minLength: 1, maxLength: 200 }),
    hardwareId: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'What the device calls itself (serial number, install id): shown in the list' })),
  },
  { additionalProperties: false },
);

const DeviceSchema = Type.Object({
  sk: Type.String({ description: 'The device id: every scan it makes carries it as `deviceId`' }),
  name: Type.String(),
  status: Type.Union([Type.Literal('pending'), Type.Literal('active'), Type.Literal('revoked')], { description: '`pending` until initialized' }),
  eventIds: Type.Union([Type.Array(Type.String()), Type.Null()], { description: 'null: every event of the organisation' }),
  listId: Nullable(Type.String()),
  checkpoint: Nullable(Type.String()),
  hardwareId: Nullable(Type.String()),
  createdAt: Type.String(),
  createdBy: Type.String(),
  initExpiresAt: Nullable(Type.String({ description: 'While pending: when its initialization token expires' })),
  initializedAt: Nullable(Type.String()),
  lastSeenAt: Nullable(Type.String({ description: 'Its last request; written behind, so at most a few seconds late on another node' })),
  scanCount: Type.Integer({ description: 'Scans it made (check-ins, check-outs and batch items; validations are not scans)' }),
  revokedAt: Nullable(Type.String()),
});

const Enrolled = Type.Object({
  sk: Type.String(),
  initToken: Type.String({ description: 'Shown once: single use, for POST /events/devices/initialize' }),
  initExpiresAt: Type.String(),
});

const Initialized = Type.Object({
  deviceId: Type.String(),
  token: Type.String({ description: 'Shown once: send it as `Authorization: Device <token>` or `x-device-token`, with `orgid`' }),
  device: DeviceSchema,
});

/**
 * The enrolment with its events resolved to ids (a slug names its event): those named, else the
 * list's event, else none (every event). The list must be one of those events'.
 */
function enrolment(svc: EventsApi<AppDeps>, tenant: string, b: Static<typeof EnrollBody>): Enrolment {
  let eventIds = b.eventIds?.map((ref) => svc.event(tenant, ref).sk);
  if (b.listId !== undefined) {
    const list = svc.findList(tenant, b.listId);
    if (!list) throw appError('ERR_NOT_FOUND', `check-in list ${b.listId}`);
    eventIds ??= [list.eventId];
    if (!eventIds.includes(list.eventId)) throw appError('ERR_VALIDATION', `body/listId ${b.listId} is a check-in list of event ${list.eventId}, not one of body/eventIds`);
  }
  return { name: b.name, eventIds: eventIds && [...new Set(eventIds)], listId: b.listId, checkpoint: b.checkpoint };
}

export function deviceRoutes(devices: ScannerDevices, svc: EventsApi<AppDeps>): RouteDef[] {
  // No route here reads a ticket record: none waits for the door's backlog.
  return [
    doorFree(route({
      method: 'POST',
      path: '/events/devices',
      auth: 'staff',
      roles: ADMIN,
      tag: TAG,
      summary: 'Enroll a scanner device',
      description:
        'Answers `{sk, initToken, initExpiresAt}`: hand `initToken` to the device (a QR code on the admin screen, say); ' +
        'it is single use and expires in 24 hours, and only its digest is stored. `eventIds` (ids or slugs) are the ' +
        'events the device may scan at and read tickets of; with `listId` and no `eventIds`, the list\'s event; with ' +
        'neither, every event of the organisation. `listId` (a check-in list of one of those events) and `checkpoint` ' +
        'stamp each of its scans unless the scan names others within its scope. At most 1000 devices not revoked (409).',
      body: EnrollBody,
      response: Enrolled,
      status: 201,
      errors: [404, 409],
      handler: (ctx) => devices.enroll(ctx.tenant, ctx.principal!.sub, enrolment(svc, ctx.tenant, ctx.body)),
    })),

    doorFree(route({
      method: 'POST',
      path: '/events/devices/initialize',
      auth: 'none',
      rateLimit: 'address',
      tag: TAG,
      summary: 'Trade an initialization token for the device token',
      description:
        'Called by the device itself, with `orgid` and no credential. Answers `{deviceId, token, device}`: `token` is the ' +
        'long-lived device credential (256 random bits; only its digest is stored; shown this once), sent as ' +
        '`Authorization: Device <token>` or `x-device-token` with `orgid`. It opens only the door routes (check-in, ' +
        'check-out, batch upload, validate, and the ticket list and lookup of its events), for its events only (403 ' +
        'otherwise); every other route answers 403. A used, expired or unknown initialization token, or one of a revoked ' +
        'device, is a 401. Limited per client address like the sign-in routes.',
      body: InitBody,
      response: Initialized,
      errors: [401],
      handler: (ctx) => devices.initialize(ctx.tenant, ctx.body.initToken, ctx.body.hardwareId),
    })),

    doorFree(route({
      method: 'GET',
      path: '/events/devices',
      auth: 'staff',
      roles: ADMIN,
      tag: TAG,
      summary: 'List the scanner devices',
      description:
        'Every enrolled device, oldest first, in the list envelope, revoked ones included: its scope, `lastSeenAt` and `scanCount`. Never a ' +
        'token. The activity figures are noted in memory on each request and written every few seconds, so another ' +
        'node\'s latest seconds may not show yet.',
      query: Type.Object(Paging),
      response: ListOf(DeviceSchema),
      handler: (ctx) => svc.page(devices.list(ctx.tenant), ctx.query),
    })),

    doorFree(route({
      method: 'POST',
      path: '/events/devices/:id/revoke',
      auth: 'staff',
      roles: ADMIN,
      tag: TAG,
      summary: 'Revoke a scanner device',
      description:
        'Its token is refused (401) from the next request on this node, and on every other node within a second of the ' +
        'write reaching it (the same path as API keys and revocations: the store\'s commit stream, normally well under a ' +
        'second; a node rereads a device token it resolved at most a second earlier). A ' +
        'pending initialization token of the device stops working too. Revoking again answers the same device. The ' +
        'device\'s scans stay in the log; enroll it again to bring it back.',
      params: Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) }),
      response: DeviceSchema,
      errors: [404],
      handler: (ctx) => devices.revoke(ctx.tenant, ctx.params.id, ctx.principal!.sub),
    })),
  ];
}
