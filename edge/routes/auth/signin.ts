// Sign-up, sign-in (every documented alias), magic codes, passcode sign-in, the org directory and
// token refresh (spec: Endpoints → Authentication and profile; Authentication).
import { Type } from '@sinclair/typebox';
import type { AuthApi, SubjectKind } from '../../../actors/auth/index.js';
import { AppError, appError } from '../../../core/errors.js';
import { route, type RequestContext, type RouteDef } from '../../route.js';
import {
  Body,
  CardUidSchema,
  EmailSchema,
  EmployeeIdSchema,
  NewPasswordSchema,
  SessionSchema,
  TAG_AUTH,
  TAG_PASSCODE,
  bearerToken,
  clientInfo,
} from './common.js';

/**
 * The organisation a sign-in is for: the `orgid` header, else `orgId` in the body (the spec sends
 * both). Both present and different is a client bug worth a clear 400.
 */
function signInTenant(svc: AuthApi, ctx: RequestContext, bodyOrgId: string | undefined): string {
  const fromBody = bodyOrgId?.trim();
  if (ctx.tenant) {
    if (fromBody && fromBody !== ctx.tenant) throw appError('ERR_VALIDATION', 'body/orgId differs from the orgid header');
    return ctx.tenant;
  }
  if (!fromBody) throw new AppError('ERR_ORGID_MISSING');
  if (!svc.orgs.org(fromBody)) throw new AppError('ERR_ORGID_INVALID', [fromBody.slice(0, 64)]);
  return fromBody;
}

function stringField(body: unknown, field: string): string | undefined {
  const v = body !== null && typeof body === 'object' ? (body as Record<string, unknown>)[field] : undefined;
  return typeof v === 'string' ? v : undefined;
}

function bearerOf(headers: Readonly<Record<string, string>>): string | undefined {
  const h = headers['authorization'];
  return h?.startsWith('Bearer ') ? h.slice(7) : undefined;
}

/** The `org` claim of a JWT, unverified: where to send it (the owner verifies it). */
function tokenOrg(token: string | undefined): string | undefined {
  const payload = token?.split('.')[1];
  if (!payload || payload.length > 4096) return undefined;
  try {
    const org = (JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { org?: unknown }).org;
    return typeof org === 'string' ? org : undefined;
  } catch {
    return undefined;
  }
}

const SignInBody = Type.Object(
  {
    orgId: Type.Optional(Type.String({ maxLength: 64, description: 'The chosen organisation; the orgid header wins' })),
    email: Type.String({ minLength: 1, maxLength: 254 }),
    password: Type.String({ minLength: 1, maxLength: 256 }),
  },
  { additionalProperties: true },
);

const RefreshBody = Type.Object(
  { refreshToken: Type.Optional(Type.String({ minLength: 1, maxLength: 4096, description: 'Or send it as the bearer token' })) },
  { additionalProperties: true },
);

export function signInRoutes(svc: AuthApi): RouteDef[] {
  const signIn = (path: string, kind: SubjectKind, summary: string) =>
    route({
      method: 'POST',
      path,
      auth: 'none',
      tenant: 'optional',
      tenantHint: (_headers, body) => stringField(body, 'orgId'),
      tag: TAG_AUTH,
      summary,
      description:
        'A staff sign-in answers a deviceToken for its organisation (see /profile/user/signin/passcode); send it back as x-device-token on later sign-ins to keep it. Wrong email or password answers 401 with one generic message. Failures slow the address they come from, not the account\'s owner: after 5 failures for one account from one address (or 50 from one address across accounts) within 15 minutes, attempts from that address answer 429 with Retry-After (30 s, doubling, at most 15 min), while the owner signing in from another address is not slowed. Against a guesser spread over many addresses, past 100 failures for one account within 24 hours every address waits (60 s, growing 1.5 times per further failure, at most 15 min); the owner can still sign in with a magic code (GET /profile/user/magic-link). When a challenge is due (org-wide 2FA, personal 2FA, or an unrecognised device with new-device verification on) the answer has no tokens: {requiresTwoFactor, challengeToken, twoFactorMethod, message}.',
      body: SignInBody,
      response: SessionSchema,
      errors: [401, 429],
      handler: (ctx) => svc.passwords.signIn(signInTenant(svc, ctx, ctx.body.orgId), kind, ctx.body.email, ctx.body.password, clientInfo(ctx)),
    });

  const refresh = (path: string, kind: SubjectKind, summary: string) =>
    route({
      method: 'POST',
      path,
      auth: 'none',
      tenant: 'optional',
      tag: TAG_AUTH,
      summary,
      description:
        'Send the refresh token as the bearer token (body {}) or as body.refreshToken. Answers a new token and refreshToken; the old refresh token stops working. Presenting an already rotated refresh token revokes the whole session (every token descended from the same sign-in).',
      body: RefreshBody,
      response: SessionSchema,
      errors: [401],
      // Routed in a cluster by the organisation the token was issued for (its owner holds the session).
      tenantHint: (headers, body) => tokenOrg(stringField(body, 'refreshToken') ?? bearerOf(headers)),
      handler: (ctx) => {
        const token = ctx.body.refreshToken ?? bearerToken(ctx);
        if (!token) throw appError('ERR_UNAUTHENTICATED', 'send the refresh token as the bearer token or in body.refreshToken');
        return svc.sessions.refresh(token, kind, ctx.tenant);
      },
    });

  return [
    route({
      method: 'POST',
      path: '/profile/user/directory/lookup',
      auth: 'none',
      tenant: 'none',
      tag: TAG_AUTH,
      summary: 'Organisations an email has a staff account in',
      description: 'No orgid and no token. Most recently used organisation first; an empty list means there is no such account.',
      body: Body({ email: Type.String({ minLength: 1, maxLength: 254 }) }),
      response: Type.Object({ orgs: Type.Array(Type.Object({ orgId: Type.String(), displayName: Type.String() })) }),
      handler: (ctx) => ({ orgs: svc.orgs.orgsOf(ctx.body.email) }),
    }),
    signIn('/profile/user/signin', 'staff', 'Staff sign-in with email and password'),
    signIn('/profile/signin', 'staff', 'Staff sign-in (alias of /profile/user/signin)'),
    signIn('/user/signin', 'staff', 'Staff sign-in (alias of /profile/user/signin)'),
    signIn('/customer/signin', 'customer', 'Customer sign-in with email and password'),
    signIn('/profile/customer/signin', 'customer', 'Customer sign-in (alias of /customer/signin)'),
    route({
      method: 'POST',
      path: '/profile/user/signup',
      auth: 'none',
      tenant: 'optional',
      tag: TAG_AUTH,
      summary: 'Create an organisation with its first user, or (with orgid and an Admin bearer) a staff user',
      description:
        'Without orgid: {email, password, name?, orgName} creates an organisation whose id is a slug of orgName plus a short random suffix; the user is its primary contact with roles User, Admin and ConfigAdmin; answers {orgId, user, token, refreshToken}. The storefront of the new organisation starts closed: tabs, orders, payments, receipts, service-point status and terminal routes need a staff or an application token, and service-point changes need a staff token (posRequiresStaffToken and servicePointsRequireStaffToken true; the catalogue, payment gateways and card payment intents stay open). `openStorefront: true` starts it in the open mode instead, as the spec has it (both settings false: anyone who knows the orgid may use the storefront, a customer token may change service points); an Admin can switch either setting later (PUT /storefront/settings, PUT /crm/reservations/settings). With orgid: only a caller holding an Admin token of that organisation may create a staff user ({email, password, name?, roles?, employeeId?, phone?}; role User is always included; Admin and ConfigAdmin are granted only by a caller who holds them, 403 otherwise); answers {orgId, user} and no tokens.',
      status: 201,
      body: Body({
        email: EmailSchema,
        password: NewPasswordSchema,
        name: Type.Optional(Type.String({ maxLength: 120 })),
        orgName: Type.Optional(Type.String({ minLength: 1, maxLength: 120 })),
        roles: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 40, pattern: '^[A-Za-z][A-Za-z0-9_-]*$' }), { maxItems: 20 })),
        employeeId: Type.Optional(EmployeeIdSchema),
        phone: Type.Optional(Type.String({ minLength: 3, maxLength: 32, pattern: '^\\+?[0-9 ()-]+$' })),
        openStorefront: Type.Optional(Type.Boolean({ description: "Organisation sign-up only: true starts the storefront in the spec's open mode (default false: closed, staff or application token)" })),
      }),
      response: SessionSchema,
      errors: [403, 409],
      handler: async (ctx) => {
        const b = ctx.body;
        if (!ctx.tenant) {
          if (!b.orgName?.trim()) throw appError('ERR_VALIDATION', 'body/orgName is required to create an organisation');
          if (b.roles || b.employeeId) throw appError('ERR_VALIDATION', 'body/roles and body/employeeId are set by an Admin, not at organisation sign-up');
          return svc.signUp.org({ email: b.email, password: b.password, name: b.name, orgName: b.orgName, openStorefront: b.openStorefront }, clientInfo(ctx));
        }
        const p = ctx.principal;
        if (!p || p.kind !== 'staff' || !p.roles.includes('Admin')) {
          throw appError('ERR_FORBIDDEN', 'creating a user in an existing organisation needs an Admin token of that organisation');
        }
        if (b.openStorefront !== undefined) throw appError('ERR_VALIDATION', 'body/openStorefront is chosen at organisation sign-up (without orgid) only');
        const user = await svc.staff.create(ctx.tenant, b, p.sub, p.roles);
        return { orgId: ctx.tenant, user: svc.accounts.publicOf(ctx.tenant, { kind: 'staff', rec: user }) };
      },
    }),
    route({
      method: 'POST',
      path: '/profile/customer/signup',
      auth: 'none',
      tag: TAG_AUTH,
      summary: 'Create a customer account and sign it in',
      description:
        'Creates a customer record and its credentials (or gives credentials to an existing customer record with this email that has none yet). Answers {token, refreshToken, orgId, user}.',
      status: 201,
      body: Body({
        email: EmailSchema,
        password: NewPasswordSchema,
        name: Type.Optional(Type.String({ maxLength: 120 })),
        phone: Type.Optional(Type.String({ minLength: 3, maxLength: 32, pattern: '^\\+?[0-9 ()-]+$' })),
      }),
      response: SessionSchema,
      errors: [409],
      handler: (ctx) => svc.signUp.customer(ctx.tenant, ctx.body, clientInfo(ctx)),
    }),
    route({
      method: 'GET',
      path: '/profile/user/magic-link',
      auth: 'none',
      tag: TAG_AUTH,
      summary: 'Send a 6-digit sign-in code by email',
      description:
        "Only type=code is supported. The code lives 10 minutes and allows 5 attempts; at most 5 codes per address per 10 minutes (429 beyond). The answer is the same whether or not the email has an account. Anyone may ask for a code to any address; only the address's owner can read it (an Admin's /profile/outbox lists its envelope only).",
      query: Type.Object({ email: EmailSchema, type: Type.String({ enum: ['code'] }) }),
      response: Type.Object({ sent: Type.Boolean(), message: Type.String() }),
      errors: [429],
      handler: async (ctx) => {
        await svc.magic.issue(ctx.tenant, ctx.query.email);
        return { sent: true, message: 'if an account exists for this email, a sign-in code has been sent to it' };
      },
    }),
    route({
      method: 'POST',
      path: '/profile/user/magic-link/redirect',
      auth: 'none',
      tag: TAG_AUTH,
      summary: 'Exchange a magic sign-in code for tokens',
      description:
        "A wrong, used or expired code answers 401. A magic code is one factor: when two-factor is due (org-wide for this kind of account, or enrolled by the person) the answer is a challenge {requiresTwoFactor, challengeToken, twoFactorMethod, message} instead of tokens, as for a password sign-in (the spec skips 2FA here; this server does not, or the magic code would bypass the organisation's 2FA). The new-device check is not made: the code already proved the inbox. " +
          'The code also proves the address for the account (emailVerified: true). On a self-registered account (a customer, or an organisation\'s founder) whose address was never proven, ' +
          'the password, PIN and second factor set before that proof are dropped and its other sessions end (someone may have typed the address without owning it): set a password with /profile/password/forgot. ' +
          'Prove the address early (POST /profile/customer/verify-email) to keep the password you chose.',
      body: Body({ email: Type.String({ minLength: 1, maxLength: 254 }), code: Type.String({ minLength: 1, maxLength: 16 }) }),
      response: SessionSchema,
      errors: [401, 429],
      handler: (ctx) => svc.magic.redeem(ctx.tenant, ctx.body.email, ctx.body.code, clientInfo(ctx)),
    }),
    route({
      method: 'POST',
      path: '/profile/user/signin/passcode',
      auth: 'none',
      tenant: 'optional',
      tag: TAG_PASSCODE,
      summary: 'Quick sign-in with employee id and PIN and/or access card',
      description:
        'The organisation is the orgid header\'s, else the one named by the device token sent as x-device-token: every staff sign-in answers a deviceToken for its organisation, and a device keeps the newest one it was given. ' +
        'x-device-id never selects an organisation, and a sign-in to another organisation cannot re-point a token: it answers a token of its own. ' +
        'Example: a till signs in once with `orgid: acme-x1y2z3` and `{"email": "manager@acme.example", "password": "…"}`, and keeps `deviceToken` from the answer (`"acme-x1y2z3.Qm9…"`, 256 random bits after the org id); ' +
        'afterwards `POST /profile/user/signin/passcode` with header `x-device-token: acme-x1y2z3.Qm9…` and body `{"employeeId": "E-7", "pin": "4821"}` signs E-7 in to acme-x1y2z3. ' +
        'Without orgid, a missing, unknown or expired device token (unused for 90 days) answers 400. Refused (403) while base-setting passcodeLoginSettings.enable is not true, and for revoked or lost cards. passcodeLoginSettings.mode: pin, card, both, or anything else for either. No two-factor or new-device challenge.',
      body: Body({
        employeeId: EmployeeIdSchema,
        pin: Type.Optional(Type.String({ pattern: '^[0-9]{4,8}$' })),
        cardUid: Type.Optional(CardUidSchema),
      }),
      response: SessionSchema,
      errors: [401, 403, 429],
      handler: (ctx) => svc.passcodes.signIn(ctx.tenant, ctx.body, clientInfo(ctx)),
    }),
    refresh('/profile/user/refresh', 'staff', 'Rotate a staff refresh token'),
    refresh('/profile/customer/refresh', 'customer', 'Rotate a customer refresh token'),
  ];
}
