// Real sign-up and sign-in through the HTTP routes, for any test that needs real tokens: an
// organisation with its founding Admin, staff users, customers, and the codes the local outbox
// recorded.
import { readOutbox } from '../../core/outbox.js';
import type { RunningApp } from '../../edge/app.js';
import { request, type Reply } from './http.js';

export const DEFAULT_PASSWORD = 'correct-horse-battery';

export interface PublicUser {
  id: string;
  kind: 'staff' | 'customer';
  orgId: string;
  email?: string;
  name?: string;
  roles: string[];
  employeeId?: string;
  customerId?: string;
  [k: string]: unknown;
}

export interface Session {
  orgId: string;
  token: string;
  refreshToken: string;
  user: PublicUser;
}

type Send = (path: string, opts: { method?: string; headers?: Record<string, string>; body?: unknown }) => Promise<Reply>;

/** The sender tests use; an auth test passes its recording one. */
function sender(app: RunningApp, send?: Send): Send {
  return send ?? ((path, opts) => request(app.url, path, opts));
}

function expectStatus(r: Reply, status: number, what: string): void {
  if (r.status !== status) throw new Error(`${what}: expected ${status}, got ${r.status} ${r.text}`);
}

/**
 * Creates an organisation through POST /profile/user/signup; the user is its primary contact (User, Admin, ConfigAdmin).
 * Its storefront starts closed unless `openStorefront` (the spec's open mode).
 */
export async function signupOrg(
  app: RunningApp,
  input: { email: string; password?: string; orgName?: string; name?: string; openStorefront?: boolean },
  send?: Send,
): Promise<Session> {
  const r = await sender(app, send)('/profile/user/signup', {
    method: 'POST',
    body: {
      email: input.email,
      password: input.password ?? DEFAULT_PASSWORD,
      orgName: input.orgName ?? 'Test Org',
      ...(input.name ? { name: input.name } : {}),
      ...(input.openStorefront !== undefined ? { openStorefront: input.openStorefront } : {}),
    },
  });
  expectStatus(r, 201, 'signupOrg');
  return { orgId: r.body.orgId, token: r.body.token, refreshToken: r.body.refreshToken, user: r.body.user };
}

/** Creates a staff user in `orgId` with an Admin token (answers the user, no tokens). */
export async function signupStaff(
  app: RunningApp,
  orgId: string,
  adminToken: string,
  input: { email: string; password?: string; name?: string; roles?: string[]; employeeId?: string; phone?: string },
  send?: Send,
): Promise<PublicUser> {
  const r = await sender(app, send)('/profile/user/signup', {
    method: 'POST',
    headers: { orgid: orgId, authorization: `Bearer ${adminToken}` },
    body: { password: DEFAULT_PASSWORD, ...input },
  });
  expectStatus(r, 201, 'signupStaff');
  return r.body.user;
}

/**
 * Creates a customer account in `orgId` and answers its session. The account then proves its
 * email with the code the sign-up sent (read as the operator would), unless `verify: false`: the
 * unproven account is what a stranger who typed someone's address gets.
 */
export async function signupCustomer(
  app: RunningApp,
  orgId: string,
  input: { email: string; password?: string; name?: string; phone?: string; verify?: boolean },
  send?: Send,
): Promise<Session & { customerId: string }> {
  const { verify = true, ...body } = input;
  const r = await sender(app, send)('/profile/customer/signup', {
    method: 'POST',
    headers: { orgid: orgId },
    body: { password: DEFAULT_PASSWORD, ...body },
  });
  expectStatus(r, 201, 'signupCustomer');
  const session = { orgId, token: r.body.token, refreshToken: r.body.refreshToken, user: r.body.user, customerId: r.body.user.customerId };
  if (verify) await proveEmail(app, session, send);
  return session;
}

/**
 * Proves the session's email: asks for a code when none was sent yet, reads it from the store as
 * the operator would, and redeems it (POST /profile/customer/verify-email).
 */
export async function proveEmail(app: RunningApp, s: { orgId: string; token: string; user: PublicUser }, send?: Send): Promise<void> {
  const email = String(s.user.email).toLowerCase();
  const account = `${s.user.kind}:${s.user.id}`;
  const codeOf = () => readOutbox(app.deps.store, s.orgId, email).filter((m) => m.kind === 'verify-email' && m.payload?.account === account).at(-1)?.code;
  let code = codeOf();
  if (!code) {
    const sent = await sender(app, send)('/profile/customer/verify-email/send', { method: 'POST', headers: bearer(s) });
    expectStatus(sent, 200, 'verify-email/send');
    code = codeOf();
  }
  const r = await sender(app, send)('/profile/customer/verify-email', { method: 'POST', headers: bearer(s), body: { code } });
  expectStatus(r, 200, 'verify-email');
}

/** Signs in with a password; answers the raw reply (a session, or a challenge). */
export function signIn(
  app: RunningApp,
  orgId: string,
  email: string,
  password = DEFAULT_PASSWORD,
  opts: { kind?: 'staff' | 'customer'; headers?: Record<string, string>; path?: string } = {},
  send?: Send,
): Promise<Reply> {
  const path = opts.path ?? (opts.kind === 'customer' ? '/customer/signin' : '/profile/user/signin');
  return sender(app, send)(path, { method: 'POST', headers: { orgid: orgId, ...opts.headers }, body: { orgId, email, password } });
}

/** Bearer headers for a session. */
export function bearer(s: { orgId: string; token: string }): Record<string, string> {
  return { orgid: s.orgId, authorization: `Bearer ${s.token}` };
}

/**
 * The newest code the local outbox recorded for `to` (optionally of one kind), read from the store:
 * the operator's view. Over HTTP only the recipient reads it (GET /profile/outbox/mine).
 */
export function lastCode(app: RunningApp, orgId: string, to: string, kind?: string): string | undefined {
  const msgs = readOutbox(app.deps.store, orgId, to).filter((m) => m.code && (!kind || m.kind === kind));
  return msgs.at(-1)?.code;
}
