// /profile/security/*: sign-in challenges and second-factor management (spec: Authentication →
// Sign-in sequence; Errors, cases 5 and 6). A staff caller with no customer record gets 404
// "customer for <email> not found" on every one of these routes.
import { Type } from '@sinclair/typebox';
import type { AuthApi } from '../../../actors/auth/index.js';
import type { Principal } from '../../../core/auth/tokens.js';
import { appError } from '../../../core/errors.js';
import { route, type RequestContext, type RouteDef } from '../../route.js';
import {
  Body,
  SessionSchema,
  TAG_2FA,
  bearerToken,
  caller,
  clientInfo,
} from './common.js';

const StatusSchema = Type.Object({
  email: Type.String(),
  twoFactorEnabled: Type.Boolean(),
  twoFactorMethod: Type.Optional(Type.String({ enum: ['email', 'sms', 'authenticator'] })),
  authenticatorEnrolled: Type.Boolean(),
  backupCodesRemaining: Type.Integer(),
  trustedDevices: Type.Integer(),
});

const Code = Type.String({ minLength: 4, maxLength: 16, description: 'A 6-digit code, or a backup code where accepted' });
const ChallengeToken = Type.String({ minLength: 20, maxLength: 200, description: 'Or send it as the bearer token' });

/** The challenge token: in the body, or as the bearer token (the spec's Auth column for these routes). */
function challengeTokenOf(ctx: RequestContext): string {
  const token = (ctx.body as { challengeToken?: string }).challengeToken ?? bearerToken(ctx);
  if (!token) throw appError('ERR_UNAUTHENTICATED', 'send the challenge token as the bearer token or in body.challengeToken');
  return token;
}

/** Cluster mode: a challenge token is `<organisation>.<secret>`; its organisation's owner holds the challenge. */
const challengeOrg: NonNullable<RouteDef['tenantHint']> = (headers, body) => {
  const v = body !== null && typeof body === 'object' ? (body as { challengeToken?: unknown }).challengeToken : undefined;
  const h = headers['authorization'];
  const token = typeof v === 'string' ? v : h?.startsWith('Bearer ') ? h.slice(7) : undefined;
  const dot = token ? token.indexOf('.') : -1;
  return dot > 0 ? token!.slice(0, dot) : undefined;
};

export function securityRoutes(svc: AuthApi): RouteDef[] {
  const admin = svc.twoFactor;
  /**
   * Spec: Errors, case 6: a staff user with no customer record gets 404 on every
   * /profile/security/* route (the challenge routes too, when a staff bearer is sent), whatever
   * the body: a route guard, checked before the body is validated.
   */
  const staffNeedsCustomer = (c: { tenant: string; principal: Principal | undefined }) => {
    if (c.principal?.kind === 'staff' && c.tenant) admin.person(c.tenant, c.principal);
  };
  return [
    route({
      method: 'POST',
      path: '/profile/security/challenge/verify',
      auth: 'none',
      tenant: 'optional',
      tenantHint: challengeOrg,
      tag: TAG_2FA,
      guard: staffNeedsCustomer,
      summary: 'Answer a sign-in challenge with its code',
      description:
        'Answers tokens when the code is right. A wrong code answers 400 "the code is not right"; the 5th wrong code ends the challenge. With trustDevice: true the device (x-device-id, else a digest of x-client-info) is remembered and not challenged as new again. An authenticator challenge also accepts a backup code.',
      body: Body({ challengeToken: Type.Optional(ChallengeToken), code: Code, trustDevice: Type.Optional(Type.Boolean()) }),
      response: SessionSchema,
      errors: [401, 404, 429],
      handler: (ctx) => {
        return svc.challenges.verify(challengeTokenOf(ctx), ctx.body.code, ctx.body.trustDevice === true, ctx.tenant, clientInfo(ctx));
      },
    }),
    route({
      method: 'POST',
      path: '/profile/security/challenge/send',
      auth: 'none',
      tenant: 'optional',
      tenantHint: challengeOrg,
      tag: TAG_2FA,
      guard: staffNeedsCustomer,
      summary: 'Send a fresh code for a sign-in challenge',
      description: 'The previous code stops working; at most 5 codes per challenge. Authenticator challenges have nothing to send (400).',
      body: Body({ challengeToken: Type.Optional(ChallengeToken) }),
      response: Type.Object({ sent: Type.Boolean(), twoFactorMethod: Type.String(), message: Type.String() }),
      errors: [401, 404, 429],
      handler: (ctx) => {
        return svc.challenges.send(challengeTokenOf(ctx), ctx.tenant);
      },
    }),
    route({
      method: 'GET',
      path: '/profile/security/status',
      auth: 'customer',
      tag: TAG_2FA,
      guard: staffNeedsCustomer,
      summary: 'Your two-factor status',
      response: StatusSchema,
      errors: [404],
      handler: (ctx) => admin.status(ctx.tenant, caller(ctx)),
    }),
    route({
      method: 'POST',
      path: '/profile/security/totp/setup',
      auth: 'customer',
      tag: TAG_2FA,
      guard: staffNeedsCustomer,
      summary: 'Start authenticator (TOTP) enrolment',
      description:
        'Answers the new secret (base32) and its otpauth:// URL, shown this once. Confirm within 15 minutes with /profile/security/totp/verify; until then sign-in is unchanged.',
      response: Type.Object({ secret: Type.String(), otpauthUrl: Type.String(), issuer: Type.String() }),
      errors: [404],
      handler: (ctx) => admin.totpSetup(ctx.tenant, caller(ctx)),
    }),
    route({
      method: 'POST',
      path: '/profile/security/totp/verify',
      auth: 'customer',
      tag: TAG_2FA,
      guard: staffNeedsCustomer,
      summary: 'Confirm authenticator enrolment with a current code',
      description: 'Turns two-factor on with method authenticator.',
      body: Body({ code: Code }),
      response: StatusSchema,
      errors: [404],
      handler: (ctx) => admin.totpVerify(ctx.tenant, caller(ctx), ctx.body.code),
    }),
    route({
      method: 'POST',
      path: '/profile/security/enable',
      auth: 'customer',
      tag: TAG_2FA,
      guard: staffNeedsCustomer,
      summary: 'Turn two-factor on with a method',
      description: 'email or sms (needs a phone on the customer record); authenticator needs a confirmed enrolment.',
      body: Body({ method: Type.String({ enum: ['email', 'sms', 'authenticator'] }) }),
      response: StatusSchema,
      errors: [404],
      handler: (ctx) => admin.enable(ctx.tenant, caller(ctx), ctx.body.method as 'email' | 'sms' | 'authenticator'),
    }),
    route({
      method: 'POST',
      path: '/profile/security/disable',
      auth: 'customer',
      tag: TAG_2FA,
      guard: staffNeedsCustomer,
      summary: 'Turn two-factor off',
      description: 'With an authenticator enrolled, needs a current authenticator code or a backup code. Drops the authenticator and the backup codes.',
      body: Body({ code: Type.Optional(Code) }),
      response: StatusSchema,
      errors: [404],
      handler: (ctx) => admin.disable(ctx.tenant, caller(ctx), ctx.body.code),
    }),
    route({
      method: 'POST',
      path: '/profile/security/backup-codes',
      auth: 'customer',
      tag: TAG_2FA,
      guard: staffNeedsCustomer,
      summary: 'Generate new backup codes',
      description: 'Ten single-use codes, shown this once and stored hashed; earlier codes stop working. Two-factor must be on.',
      response: Type.Object({ codes: Type.Array(Type.String()), generatedAt: Type.String() }),
      errors: [404],
      handler: (ctx) => admin.backupGenerate(ctx.tenant, caller(ctx)),
    }),
    route({
      method: 'GET',
      path: '/profile/security/trusted-devices',
      auth: 'customer',
      tag: TAG_2FA,
      guard: staffNeedsCustomer,
      summary: 'Devices that skip new-device verification',
      response: Type.Object({
        data: Type.Array(Type.Object({ id: Type.String(), label: Type.Optional(Type.String()), addedAt: Type.String() })),
      }),
      errors: [404],
      handler: (ctx) => ({ data: admin.trustedDevices(ctx.tenant, caller(ctx)) }),
    }),
    route({
      method: 'POST',
      path: '/profile/security/trusted-devices/forget',
      auth: 'customer',
      tag: TAG_2FA,
      guard: staffNeedsCustomer,
      summary: 'Forget one trusted device (by id) or all of them',
      body: Body({ id: Type.Optional(Type.String({ minLength: 8, maxLength: 40, pattern: '^[0-9a-f]+$' })) }),
      response: Type.Object({ removed: Type.Integer() }),
      errors: [404],
      handler: (ctx) => admin.forgetDevices(ctx.tenant, caller(ctx), ctx.body.id),
    }),
  ];
}
