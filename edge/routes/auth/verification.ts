// Proving an email and recovering a password (issue 28): the routes translate; the rules live in
// actors/auth/email-verification.ts and actors/auth/recovery.ts.
import { Type } from '@sinclair/typebox';
import type { AuthApi } from '../../../actors/auth/index.js';
import { route, type RouteDef } from '../../route.js';
import { Body, EmailSchema, NewPasswordSchema, TAG_AUTH, caller, clientInfo } from './common.js';

const Code = Type.String({ minLength: 4, maxLength: 16, description: 'The 6-digit code from the message' });
const AccountType = Type.String({
  enum: ['staff', 'customer'],
  description: 'Only this kind of account of the address; default: every account of the address in the organisation',
});

const WHAT_PROOF_DOES =
  'Until an account proves its email, nothing is matched to it by that address: no tickets by holder email, no bookings or orders staff made for the address, ' +
  'no staff security record, no messages at /profile/outbox/mine, and every /profile/security/* route answers 403. What the account creates itself (its bookings, chats, tabs) is its own from the start.';

export function verificationRoutes(svc: AuthApi): RouteDef[] {
  return [
    route({
      method: 'POST',
      path: '/profile/customer/verify-email/send',
      auth: 'customer',
      tag: TAG_AUTH,
      summary: 'Send a code that proves your email address (customer or staff)',
      description:
        "Sends a 6-digit code (outbox kind `verify-email`) to the account's own email; a customer sign-up sends the first one itself. At most 5 codes per 10 minutes (429 with Retry-After past that); each lives 10 minutes. " +
        'An account whose address is already proven answers {sent: false, emailVerified: true}. The code goes to the inbox only: it is never shown at /profile/outbox/mine to an unproven account ' +
        '(with the `local` provider the operator reads it in DATA_DIR/local-outbox-codes.jsonl). ' +
        WHAT_PROOF_DOES,
      response: Type.Object({ sent: Type.Boolean(), emailVerified: Type.Boolean(), message: Type.String() }),
      errors: [429],
      handler: (ctx) => svc.verification.send(ctx.tenant, caller(ctx)),
    }),
    route({
      method: 'POST',
      path: '/profile/customer/verify-email',
      auth: 'customer',
      tag: TAG_AUTH,
      summary: 'Prove your email address with the code sent to it',
      description:
        "With the account's own token and the code: the address is proven for this account ({emailVerified: true}, also in GET /profile and sign-in answers). A wrong code answers 400 with the attempts left (5 per code). " +
        'A magic-code sign-in and a password reset prove the address too. A staff member proving their address also claims the customer records of it: an unproven customer account holding the address loses the password and second factor someone set on it, with its sessions. ' +
        WHAT_PROOF_DOES,
      body: Body({ code: Code }),
      response: Type.Object({ emailVerified: Type.Boolean() }),
      errors: [429],
      handler: (ctx) => svc.verification.verify(ctx.tenant, caller(ctx), ctx.body.code, clientInfo(ctx)),
    }),
    route({
      method: 'POST',
      path: '/profile/password/forgot',
      auth: 'none',
      tag: TAG_AUTH,
      summary: 'Ask for a password-reset code (staff or customer)',
      description:
        'Sends a 6-digit code (outbox kind `password-reset`) to the address when an account of this organisation uses it. The answer is the same whether or not such an account exists, and whether or not a code went out ' +
        '(at most 5 codes per address per 10 minutes). Redeem it at /profile/password/reset.',
      body: Body({ email: EmailSchema, accountType: Type.Optional(AccountType) }),
      response: Type.Object({ message: Type.String() }),
      handler: (ctx) => svc.recovery.forgot(ctx.tenant, ctx.body.email, ctx.body.accountType as 'staff' | 'customer' | undefined),
    }),
    route({
      method: 'POST',
      path: '/profile/password/reset',
      auth: 'none',
      tag: TAG_AUTH,
      summary: 'Set a new password with a reset code',
      description:
        'Sets the password of the accounts of this address in the organisation (the staff user and the customer account, or only the kind named by accountType), proves the address for them, and ends every session they had ' +
        '(access and refresh tokens: a stolen session ends here). Credentials set on an account before its address was proven (a password, a PIN, a second factor) are dropped. ' +
        'Codes are single-use, live 10 minutes and allow 5 guesses; wrong guesses are also limited per address and per client address (429 with Retry-After). Then sign in with the new password.',
      body: Body({ email: EmailSchema, code: Code, newPassword: NewPasswordSchema, accountType: Type.Optional(AccountType) }),
      response: Type.Object({ reset: Type.Boolean(), emailVerified: Type.Boolean(), accounts: Type.Integer({ description: 'How many accounts of the address got the new password' }) }),
      errors: [429],
      handler: (ctx) => svc.recovery.reset(ctx.tenant, { ...ctx.body, accountType: ctx.body.accountType as 'staff' | 'customer' | undefined }, clientInfo(ctx)),
    }),
  ];
}
