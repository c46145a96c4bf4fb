// The signed-in user's profile, self-service delete, the organisation's security settings and the
// outbox listing (spec: Endpoints → Authentication and profile).
import { Type } from '@sinclair/typebox';
import { securitySettingsOf, OUTBOX_JOB, type OutboxRead, accountOf, type AuthApi, type SecuritySettings } from '../../../actors/auth/index.js';
import { appError } from '../../../core/errors.js';
import { route, type RouteDef } from '../../route.js';
import { Body, Id, NewPasswordSchema, PageQuery, PublicUserSchema, TAG_2FA, TAG_AUTH, caller, clientInfo, listOf } from './common.js';

const SettingsSchema = Type.Object({
  enableTwoFactorForUsers: Type.Boolean(),
  enableTwoFactorForCustomers: Type.Boolean(),
  enableNewDeviceAuthentication: Type.Boolean(),
  requireTwoFactorForMagicCode: Type.Boolean({
    description: 'Off by default (the spec: the magic-code path performs no 2FA check). On: a magic-code sign-in also passes the two-factor check due for the account.',
  }),
});

const SettingsPatch = {
  enableTwoFactorForUsers: Type.Optional(Type.Boolean()),
  enableTwoFactorForCustomers: Type.Optional(Type.Boolean()),
  enableNewDeviceAuthentication: Type.Optional(Type.Boolean()),
  requireTwoFactorForMagicCode: Type.Optional(Type.Boolean()),
};

const OutboxItem = Type.Object({
  id: Type.String(),
  channel: Type.String(),
  to: Type.String(),
  subject: Type.Optional(Type.String()),
  body: Type.Optional(Type.String()),
  code: Type.Optional(Type.String()),
  kind: Type.Optional(Type.String()),
  provider: Type.String(),
  sentAt: Type.String(),
  withheld: Type.Optional(Type.Boolean({ description: 'True when body and code were left out: the message carries a sign-in or verification code or link, readable by its recipient only' })),
});

const OutboxQuery = Type.Object({
  channel: Type.Optional(Type.String({ enum: ['email', 'sms', 'print', 'push', 'voice'] })),
  kind: Type.Optional(Type.String({ maxLength: 64 })),
  ...PageQuery,
});

export function profileRoutes(svc: AuthApi): RouteDef[] {
  return [
    route({
      method: 'GET',
      path: '/profile',
      auth: 'staff',
      tag: TAG_AUTH,
      summary: 'The signed-in staff user',
      description: 'Profile fields only: never a password or PIN hash, secret or code.',
      response: PublicUserSchema,
      handler: (ctx) => {
        const p = caller(ctx);
        const s = svc.accounts.subject(ctx.tenant, 'staff', p.sub);
        if (!s) throw appError('ERR_UNAUTHENTICATED', 'the account no longer exists or is disabled; sign in again');
        return svc.accounts.publicOf(ctx.tenant, s);
      },
    }),
    route({
      method: 'DELETE',
      path: '/profile/user/self',
      auth: 'staff',
      tag: TAG_AUTH,
      summary: 'Delete your own staff account',
      description:
        "Refused (403) for the organisation's primary contact. Deletes the user, its credentials and its directory entry; its refresh tokens, API keys and every access token already issued stop working on the next request, on every node.",
      response: Type.Object({ deleted: Type.Boolean(), id: Type.String() }),
      errors: [403],
      handler: (ctx) => svc.deleteSelf(ctx.tenant, caller(ctx)),
    }),
    route({
      method: 'POST',
      path: '/profile/password',
      auth: 'customer',
      tag: TAG_AUTH,
      summary: 'Change your password (staff or customer)',
      description:
        'Needs the current password (a wrong one answers 400 and counts toward the sign-in slow-down). Sessions already signed in keep running until they expire; end one with /profile/signout.',
      body: Body({ currentPassword: Type.String({ minLength: 1, maxLength: 256 }), newPassword: NewPasswordSchema }),
      response: Type.Object({ changed: Type.Boolean() }),
      errors: [429],
      handler: async (ctx) => {
        await svc.passwords.change(ctx.tenant, caller(ctx), ctx.body.currentPassword, ctx.body.newPassword, clientInfo(ctx));
        return { changed: true };
      },
    }),
    route({
      method: 'POST',
      path: '/profile/signout',
      auth: 'customer',
      tag: TAG_AUTH,
      summary: 'End this session',
      description:
        "Ends the session the access token belongs to: its refresh tokens (every token rotated from the same sign-in) and its access tokens, this one included, are refused from the answer on (401), on every node. The account's other sessions (other devices, other sign-ins) keep running. An API key or application token has no session: signedOut is false.",
      response: Type.Object({ signedOut: Type.Boolean() }),
      handler: async (ctx) => {
        const p = caller(ctx);
        if (!p.sid) return { signedOut: false };
        await svc.sessions.revokeFamily(ctx.tenant, p.sid, 'signed out');
        return { signedOut: true };
      },
    }),
    route({
      method: 'GET',
      path: '/profile/org/security-settings',
      auth: 'staff',
      roles: ['Admin'],
      tag: TAG_2FA,
      summary: "The organisation's two-factor and new-device settings",
      response: SettingsSchema,
      handler: (ctx) => securitySettingsOf(svc.accounts.org(ctx.tenant)),
    }),
    route({
      method: 'PUT',
      path: '/profile/org/security-settings',
      auth: 'staff',
      roles: ['Admin'],
      tag: TAG_2FA,
      summary: "Change the organisation's two-factor and new-device settings",
      description:
        'Partial: fields left out keep their value. Answers the whole settings object. The fields may be sent flat ' +
        '(`{"enableTwoFactorForUsers": true}`) or, as the spec names them, inside `securitySettings` ' +
        '(`{"securitySettings": {"enableTwoFactorForUsers": true}}`).',
      body: Type.Object(
        {
          ...SettingsPatch,
          securitySettings: Type.Optional(Type.Object(SettingsPatch, { additionalProperties: false, minProperties: 1 })),
        },
        { additionalProperties: false, minProperties: 1 },
      ),
      response: SettingsSchema,
      handler: (ctx) => {
        const { securitySettings, ...flat } = ctx.body as { securitySettings?: Partial<SecuritySettings> } & Partial<SecuritySettings>;
        const patch = { ...securitySettings, ...flat };
        return svc.updateSecuritySettings(ctx.tenant, patch);
      },
    }),
    route({
      method: 'POST',
      path: '/profile/user/status',
      auth: 'staff',
      roles: ['Admin'],
      tag: TAG_AUTH,
      summary: 'Disable or re-enable a staff user',
      description:
        "status disabled stops the user's access tokens, refresh tokens and API keys on the next request, on every node; sign-in is refused until re-enabled. Re-enabling restores the user's API keys; tokens and sessions issued before the disable stay refused. Refused (403) for your own account, for the primary contact, and for a user holding a role you do not hold.",
      body: Body({ userId: Id, status: Type.String({ enum: ['active', 'disabled'] }) }),
      response: PublicUserSchema,
      errors: [403, 404],
      handler: async (ctx) => {
        const rec = await svc.staff.setStatus(ctx.tenant, caller(ctx), ctx.body.userId, ctx.body.status as 'active' | 'disabled');
        return svc.accounts.publicOf(ctx.tenant, { kind: 'staff', rec });
      },
    }),
    route({
      method: 'GET',
      path: '/profile/outbox',
      auth: 'staff',
      roles: ['Admin'],
      tag: TAG_AUTH,
      summary: 'Messages the organisation sent (email, SMS, ...), newest first',
      description:
        "Envelopes for Admins: channel, to, subject, kind, provider, sentAt. A message that carries a sign-in or verification code or link (kinds magic-code, two-factor, and any message with a code) is listed without body or code (withheld: true): it belongs to its recipient alone, who reads it at /profile/outbox/mine. Other messages show their body. With the smtp provider only envelopes are recorded at all. The operator of a server on the local provider sees sign-in codes in the server log at level debug.",
      query: Type.Object({ to: Type.Optional(Type.String({ maxLength: 254 })), ...OutboxQuery.properties }),
      response: listOf(OutboxItem),
      handler: (ctx) => {
        const q = ctx.query;
        const read: OutboxRead = { op: 'admin', tenant: ctx.tenant, to: q.to?.trim().toLowerCase() || undefined, channel: q.channel, kind: q.kind, page: q.page, pageSize: q.pageSize };
        return ctx.deps.queries.run(ctx.tenant, OUTBOX_JOB, read);
      },
    }),
    route({
      method: 'GET',
      path: '/profile/outbox/mine',
      auth: 'customer',
      tag: TAG_AUTH,
      summary: 'Messages sent to you (your email or phone), newest first, codes included',
      description:
        "For a staff user or customer: the messages addressed to the account's own email or phone as stored on the account (for staff also the phone of the customer record with the same email), never anyone else's. A sign-in or verification code is answered only to the account it was sent for (a customer account with a staff user's email sees the staff user's codes as envelopes, withheld: true). With the local outbox provider (development and tests: nothing is delivered) they are answered in full, codes included, so a person can finish a sign-in; with another provider the message went to the inbox, and only envelopes are answered here.",
      query: OutboxQuery,
      response: listOf(OutboxItem),
      handler: (ctx) => {
        const q = ctx.query;
        const p = caller(ctx);
        const account = accountOf(p.kind === 'customer' ? 'customer' : 'staff', p.sub);
        const full = ctx.deps.outbox.name === 'local';
        const read: OutboxRead = { op: 'mine', tenant: ctx.tenant, addresses: svc.accounts.ownAddresses(ctx.tenant, p), account, full, channel: q.channel, kind: q.kind, page: q.page, pageSize: q.pageSize };
        return ctx.deps.queries.run(ctx.tenant, OUTBOX_JOB, read);
      },
    }),
  ];
}
