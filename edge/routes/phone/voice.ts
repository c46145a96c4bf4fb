// Softphone (spec: Endpoints → Phone (staff), Limits → Phone device heartbeat): device
// registration with a voice access token and the caller's numbers, heartbeats, the device list
// with online state, fresh tokens, the organisation's numbers, who has which phone, and a system
// summary that never shows a secret.
import { Type } from '@sinclair/typebox';
import { DEVICE_CAPABILITIES, HEARTBEAT_INTERVAL_SECONDS, HEARTBEAT_TTL_SECONDS, numberAdminView, type PhoneApi } from '../../../actors/phone/index.js';
import { normalizePhone } from '../../../actors/inbox/index.js';
import { appError } from '../../../core/errors.js';
import { voiceIdentity, type VoiceProvider } from '../../../core/voice.js';
import { route, type RequestContext, type RouteDef } from '../../route.js';
import { Enum, Email, Id, ListOf, pageOf, PageProps } from '../crm/schemas.js';

const TAG = 'Phone';
/** The header inbound provider webhooks carry the shared secret in. */
export const WEBHOOK_SECRET_HEADER = 'x-webhook-secret';
const DeviceId = Type.String({ pattern: '^[A-Za-z0-9._:-]{1,128}$', description: 'Stable id the app generates for the install' });
const Capabilities = Type.Array(Enum(DEVICE_CAPABILITIES), {
  minItems: 1,
  uniqueItems: true,
  description: "'voice' and/or 'sms'",
});
const NumberT = Type.Object({
  id: Type.String(),
  number: Type.String(),
  label: Type.String(),
  capabilities: Type.Array(Type.String()),
  shared: Type.Boolean(),
});
const NumberAdmin = Type.Object({
  id: Type.String(),
  number: Type.String(),
  label: Type.String(),
  capabilities: Type.Array(Type.String()),
  shared: Type.Boolean(),
  assignedTo: Type.Array(Type.String()),
  mine: Type.Boolean(),
});
const DeviceT = Type.Object({
  id: Type.String(),
  deviceId: Type.String(),
  email: Type.String(),
  identity: Type.String(),
  platform: Type.String(),
  label: Type.String(),
  capabilities: Type.Array(Type.String()),
  clientInfo: Type.Object({}, { additionalProperties: true }),
  registeredAt: Type.String(),
  lastSeenAt: Type.String(),
  online: Type.Boolean(),
  /** When the device goes offline without another heartbeat. */
  expiresAt: Type.String(),
});
const TokenT = {
  identity: Type.String({ description: 'user:<orgId>:<email>' }),
  token: Type.String({ description: "The voice provider's access token (JWT with the identity and a voice grant)" }),
  expiresAt: Type.String(),
  ttlSeconds: Type.Integer(),
  provider: Type.String(),
};
const HeartbeatT = {
  heartbeatIntervalSeconds: Type.Integer(),
  heartbeatTtlSeconds: Type.Integer(),
};

/** The caller's email, required for a voice identity. */
function callerEmail(ctx: RequestContext): string {
  const email = ctx.principal?.email;
  if (!email) throw appError('ERR_FORBIDDEN', 'a voice identity needs a staff token that carries an email');
  return email.trim().toLowerCase();
}

export function phoneRoutes(phone: PhoneApi, voice: VoiceProvider): RouteDef[] {
  const token = (ctx: RequestContext, email: string) => ({
    ...voice.accessToken(voiceIdentity(ctx.tenant, email)),
    provider: voice.name,
  });
  return [
    route({
      method: 'POST',
      path: '/phone/voice/register-device',
      auth: 'staff',
      tag: TAG,
      summary: 'Register this device for calls and texts; answers the voice identity, an access token and the assigned numbers',
      description: `Registering again updates the device (and moves it to the caller if another user had it). Registration counts as a heartbeat; send \`POST /phone/voice/heartbeat\` every ${HEARTBEAT_INTERVAL_SECONDS} s: a device silent for ${HEARTBEAT_TTL_SECONDS} s is offline.`,
      body: Type.Object({
        deviceId: DeviceId,
        platform: Type.String({ pattern: '^[A-Za-z0-9_-]{1,32}$', description: 'ios, android, web, desktop, ...' }),
        label: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
        capabilities: Capabilities,
        clientInfo: Type.Optional(Type.Object({}, { additionalProperties: true, maxProperties: 50 })),
      }),
      response: Type.Object({ ...TokenT, numbers: Type.Array(NumberT), device: DeviceT, ...HeartbeatT }),
      handler: async (ctx) => {
        const email = callerEmail(ctx);
        const identity = voiceIdentity(ctx.tenant, email);
        const device = await phone.device(ctx.tenant, ctx.body.deviceId, {
          type: 'register',
          owner: { email, identity, userId: ctx.principal!.sub },
          ...ctx.body,
          platform: ctx.body.platform.toLowerCase(),
        });
        return {
          ...token(ctx, email),
          numbers: phone.numbersFor(ctx.tenant, email),
          device,
          heartbeatIntervalSeconds: HEARTBEAT_INTERVAL_SECONDS,
          heartbeatTtlSeconds: HEARTBEAT_TTL_SECONDS,
        };
      },
    }),
    route({
      method: 'POST',
      path: '/phone/voice/heartbeat',
      auth: 'staff',
      tag: TAG,
      summary: `Keep a device online (every ${HEARTBEAT_INTERVAL_SECONDS} s; offline after ${HEARTBEAT_TTL_SECONDS} s without one)`,
      description: 'An unknown device, or one registered to someone else, answers 404: register it again.',
      body: Type.Object({ deviceId: DeviceId }),
      response: Type.Object({ deviceId: Type.String(), online: Type.Boolean(), lastSeenAt: Type.String(), expiresAt: Type.String(), ...HeartbeatT }),
      errors: [404],
      handler: async (ctx) => {
        const v = await phone.device(ctx.tenant, ctx.body.deviceId, { type: 'heartbeat', email: callerEmail(ctx) });
        return {
          deviceId: v.deviceId,
          online: v.online,
          lastSeenAt: v.lastSeenAt,
          expiresAt: v.expiresAt,
          heartbeatIntervalSeconds: HEARTBEAT_INTERVAL_SECONDS,
          heartbeatTtlSeconds: HEARTBEAT_TTL_SECONDS,
        };
      },
    }),
    route({
      method: 'POST',
      path: '/phone/voice/unregister-device',
      auth: 'staff',
      tag: TAG,
      summary: 'Remove a device (its owner, or an Admin for any device)',
      body: Type.Object({ deviceId: DeviceId }),
      response: Type.Object({ deviceId: Type.String(), unregistered: Type.Boolean() }),
      errors: [404],
      handler: async (ctx) => {
        await phone.device(ctx.tenant, ctx.body.deviceId, {
          type: 'unregister',
          email: callerEmail(ctx),
          admin: ctx.principal!.roles.includes('Admin'),
        });
        return { deviceId: ctx.body.deviceId, unregistered: true };
      },
    }),
    route({
      method: 'GET',
      path: '/phone/voice/devices',
      auth: 'staff',
      tag: TAG,
      summary: "The organisation's softphone devices with their online state",
      description: `Online means a heartbeat (or registration) less than ${HEARTBEAT_TTL_SECONDS} s ago. Filters: email, online, platform, mine (only the caller's).`,
      query: Type.Object({
        email: Type.Optional(Type.String({ minLength: 1, maxLength: 254 })),
        online: Type.Optional(Type.Boolean()),
        platform: Type.Optional(Type.String({ minLength: 1, maxLength: 32 })),
        mine: Type.Optional(Type.Boolean()),
        ...PageProps,
      }),
      response: ListOf(DeviceT, { online: Type.Integer(), offline: Type.Integer() }),
      handler: (ctx) => {
        const q = ctx.query;
        const email = q.mine ? callerEmail(ctx) : q.email?.toLowerCase();
        const views = phone.devices(ctx.tenant, { email, online: q.online, platform: q.platform });
        const online = views.filter((d) => d.online).length;
        return pageOf(ctx.deps, views, q, { online, offline: views.length - online });
      },
    }),
    route({
      method: 'POST',
      path: '/phone/token',
      auth: 'staff',
      tag: TAG,
      summary: "A fresh voice access token for the caller's identity",
      response: Type.Object(TokenT),
      handler: (ctx) => token(ctx, callerEmail(ctx)),
    }),
    route({
      method: 'GET',
      path: '/phone/numbers',
      auth: 'staff',
      tag: TAG,
      summary: "The organisation's phone numbers and who they are assigned to",
      description: 'A number assigned to nobody is shared by every staff user. `mine` marks the numbers the caller may use; `?mine=true` lists only those.',
      query: Type.Object({ mine: Type.Optional(Type.Boolean()), ...PageProps }),
      response: ListOf(NumberAdmin),
      handler: (ctx) => {
        const all = phone.numbers(ctx.tenant, callerEmail(ctx), ctx.query.mine === true);
        return pageOf(ctx.deps, all, ctx.query);
      },
    }),
    route({
      method: 'POST',
      path: '/phone/numbers',
      auth: 'staff',
      roles: ['Admin'],
      tag: TAG,
      summary: 'Add a phone number, or change its label, capabilities and assignment (Admin)',
      description: 'Keyed by the number: posting a known number replaces the settings given and keeps the others. `assignedTo` lists staff emails; empty shares the number with everyone. Changes of one number sent at once are applied one after the other, so none is lost.',
      body: Type.Object({
        number: Type.String({ minLength: 3, maxLength: 32, description: 'E.164, e.g. +15551234567' }),
        label: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
        capabilities: Type.Optional(Capabilities),
        assignedTo: Type.Optional(Type.Array(Email, { maxItems: 500, uniqueItems: true })),
      }),
      response: NumberAdmin,
      handler: async (ctx) => {
        const number = normalizePhone(ctx.body.number);
        if (!number || !number.startsWith('+')) throw appError('ERR_VALIDATION', 'body/number must be an E.164 phone number, e.g. +15551234567');
        const saved = await phone.saveNumber(ctx.tenant, { ...ctx.body, number });
        if (saved.created) ctx.status = 201;
        return numberAdminView(saved.rec, callerEmail(ctx));
      },
    }),
    route({
      method: 'DELETE',
      path: '/phone/numbers/:id',
      auth: 'staff',
      roles: ['Admin'],
      tag: TAG,
      summary: 'Remove a phone number (Admin)',
      params: Type.Object({ id: Id }),
      response: Type.Object({ id: Type.String(), deleted: Type.Boolean() }),
      errors: [404],
      handler: async (ctx) => {
        const gone = await phone.removeNumber(ctx.tenant, ctx.params.id);
        return { id: gone.sk, deleted: true };
      },
    }),
    route({
      method: 'GET',
      path: '/phone/user-phones',
      auth: 'staff',
      tag: TAG,
      summary: 'Who has which phone: each staff user with a device or an assigned number, their numbers and device counts',
      description: 'Shared numbers (assigned to nobody) are listed under `sharedNumbers` rather than repeated for every user. Filter: email.',
      query: Type.Object({ email: Type.Optional(Type.String({ minLength: 1, maxLength: 254 })), ...PageProps }),
      response: ListOf(
        Type.Object({
          email: Type.String(),
          identity: Type.String(),
          numbers: Type.Array(Type.String()),
          devices: Type.Object({ total: Type.Integer(), online: Type.Integer() }),
        }),
        { sharedNumbers: Type.Array(Type.String()) },
      ),
      handler: (ctx) => {
        const { rows, shared } = phone.userPhones(ctx.tenant, ctx.query.email?.toLowerCase());
        return pageOf(ctx.deps, rows, ctx.query, { sharedNumbers: shared });
      },
    }),
    route({
      method: 'GET',
      path: '/phone/system',
      auth: 'staff',
      tag: TAG,
      summary: 'The phone system: provider, configuration summary and device counts (never a secret)',
      response: Type.Object({
        provider: Type.String(),
        live: Type.Boolean({ description: 'false for the local provider: its tokens are not accepted by the real service' }),
        accountSid: Type.String(),
        apiKeySid: Type.String(),
        outgoingApplicationSid: Type.Union([Type.String(), Type.Null()]),
        pushCredentialSid: Type.Union([Type.String(), Type.Null()]),
        tokenTtlSeconds: Type.Integer(),
        identityFormat: Type.String(),
        heartbeat: Type.Object({ intervalSeconds: Type.Integer(), ttlSeconds: Type.Integer() }),
        webhooks: Type.Object({ enabled: Type.Boolean(), header: Type.String(), paths: Type.Array(Type.String()) }),
        numbers: Type.Integer(),
        devices: Type.Object({
          total: Type.Integer(),
          online: Type.Integer(),
          offline: Type.Integer(),
          byPlatform: Type.Record(Type.String(), Type.Integer()),
        }),
      }),
      handler: (ctx) => ({
        ...voice.summary(),
        identityFormat: 'user:<orgId>:<email>',
        heartbeat: { intervalSeconds: HEARTBEAT_INTERVAL_SECONDS, ttlSeconds: HEARTBEAT_TTL_SECONDS },
        webhooks: {
          enabled: Boolean(ctx.deps.config.voice.webhookSecret),
          header: WEBHOOK_SECRET_HEADER,
          paths: ['/phone/inbound/sms', '/phone/inbound/call'],
        },
        ...phone.counts(ctx.tenant),
      }),
    }),
  ];
}
