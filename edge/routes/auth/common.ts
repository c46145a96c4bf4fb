// Shared pieces of the auth route tables: client info from headers, the schemas several routes
// answer with, and the reference section names.
import { Type, type TProperties } from '@sinclair/typebox';
import { deviceOf, type ClientInfo } from '../../../actors/auth/index.js';
import type { Principal } from '../../../core/auth/tokens.js';
import { appError } from '../../../core/errors.js';
import type { RequestContext } from '../../route.js';

export const TAG_AUTH = 'Authentication';
export const TAG_PASSCODE = 'Passcodes and cards';
export const TAG_APPS = 'Applications and API keys';
export const TAG_2FA = 'Security (2FA)';

/** The bearer token of the Authorization header, on routes whose credential is not an access token. */
export function bearerToken(ctx: RequestContext): string | undefined {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(ctx.headers['authorization'] ?? '');
  return m?.[1];
}

export function clientInfo(ctx: RequestContext): ClientInfo {
  return { ip: ctx.ip, ...deviceOf(ctx.headers) };
}

/** The authenticated caller of a route whose `auth` guarantees one. */
export function caller(ctx: RequestContext): Principal {
  if (!ctx.principal) throw appError('ERR_UNAUTHENTICATED', 'send a bearer token in the Authorization header');
  return ctx.principal;
}

// ---- schemas ------------------------------------------------------------------------------

/** A request body that refuses fields it does not declare (400 naming them). */
export function Body<T extends TProperties>(props: T) {
  return Type.Object(props, { additionalProperties: false });
}

export const EmailSchema = Type.String({ format: 'email', maxLength: 254, description: 'Compared case-insensitively' });
export const NewPasswordSchema = Type.String({ minLength: 8, maxLength: 256, description: 'At least 8 characters' });
export const Id = Type.String({ pattern: '^[0-9a-f]{24}$' });
export const EmployeeIdSchema = Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9._-]+$' });
export const CardUidSchema = Type.String({ minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9:._-]+$' });

export const PublicUserSchema = Type.Object(
  {
    id: Type.String(),
    kind: Type.String({ enum: ['staff', 'customer'] }),
    orgId: Type.String(),
    email: Type.Optional(Type.String()),
    name: Type.Optional(Type.String()),
    roles: Type.Array(Type.String()),
    employeeId: Type.Optional(Type.String()),
    phone: Type.Optional(Type.String()),
    status: Type.Optional(Type.String()),
    customerId: Type.Optional(Type.String()),
    createdate: Type.String(),
    isPrimaryContact: Type.Optional(Type.Boolean()),
    emailVerified: Type.Optional(
      Type.Boolean({ description: 'Whether the account proved its email (POST /profile/customer/verify-email, a magic-code sign-in or a password reset); nothing is matched to it by email until then' }),
    ),
  },
  { description: 'A staff user or customer, without credentials' },
);

/** A sign-in answer: either tokens, or the spec's challenge shape (no tokens). */
export const SessionSchema = Type.Object(
  {
    token: Type.Optional(Type.String({ description: 'Access JWT' })),
    refreshToken: Type.Optional(Type.String()),
    tokenType: Type.Optional(Type.String()),
    expiresIn: Type.Optional(Type.Integer({ description: 'Seconds until the access token expires' })),
    orgId: Type.Optional(Type.String()),
    user: Type.Optional(PublicUserSchema),
    deviceToken: Type.Optional(
      Type.String({
        description:
          'Staff sign-ins: a secret naming this device and the organisation it signed into. Keep it on the device and send it as the x-device-token header: a later sign-in to the same organisation answers it back (renewed), and /profile/user/signin/passcode without orgid signs in to its organisation. A sign-in to another organisation answers a different token and never changes this one. Unused for 90 days, it expires.',
      }),
    ),
    requiresTwoFactor: Type.Optional(Type.Boolean()),
    challengeToken: Type.Optional(Type.String()),
    twoFactorMethod: Type.Optional(Type.String({ enum: ['email', 'sms', 'authenticator'] })),
    message: Type.Optional(Type.String()),
  },
  {
    description:
      'Tokens {token, refreshToken, tokenType, expiresIn, orgId, user} (and deviceToken for staff), or, when a challenge is due, exactly {requiresTwoFactor: true, challengeToken, twoFactorMethod, message} and no tokens',
  },
);

export const CardSchema = Type.Object({
  id: Type.String(),
  employeeId: Type.String(),
  userId: Type.String(),
  cardUid: Type.String(),
  status: Type.String({ enum: ['active', 'revoked', 'lost'] }),
  label: Type.Optional(Type.String()),
  statusChangedAt: Type.Optional(Type.String()),
  createdate: Type.String(),
  modifydate: Type.String(),
});

export { ListOf as listOf } from '../../schemas.js';

export const PageQuery = {
  page: Type.Optional(Type.Integer({ minimum: 1, description: '1-based page (default 1)' })),
  pageSize: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, description: 'Default 20, at most 200' })),
};

