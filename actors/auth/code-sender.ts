// Sending a one-time code (2FA, magic sign-in, password reset, email verification) to its owner.
import { appendFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CODE_TTL_MS } from './codes-actor.js';
import type { AuthDeps } from './deps.js';
import type { TwoFactorMethod } from './model.js';
import { CODE_KINDS, type CodeKind } from './outbox-view.js';

/**
 * With the `local` outbox, the one-time codes it records (undelivered) are also appended here,
 * under DATA_DIR, one JSON line each, readable by the server's user only: the operator's way to
 * sign in on a development server without reading the store.
 */
export const LOCAL_CODES_FILE = 'local-outbox-codes.jsonl';

/**
 * Sends a one-time code to its owner's address. Only that person reads it: Admins see the
 * envelope (outbox-view.ts). With the `local` provider nothing is delivered, so the operator finds
 * the code in LOCAL_CODES_FILE under DATA_DIR (owner-only), never in the log: logs are shipped
 * and kept where codes must not go.
 */
export async function sendCode(
  deps: Pick<AuthDeps, 'outbox' | 'clock' | 'logger' | 'config'>,
  tenant: string,
  method: TwoFactorMethod,
  to: string,
  code: string,
  kind: CodeKind,
  account: string,
): Promise<void> {
  const minutes = CODE_TTL_MS / 60_000;
  const what = kind === CODE_KINDS.magic ? 'sign-in' : kind === CODE_KINDS.passwordReset ? 'password reset' : 'verification';
  if (deps.outbox.name === 'local' && deps.config.dataDir) {
    const line = JSON.stringify({ time: new Date(deps.clock.now()).toISOString(), orgId: tenant, to, kind, code }) + '\n';
    await appendFile(join(deps.config.dataDir, LOCAL_CODES_FILE), line, { mode: 0o600 }).catch((err: Error) =>
      deps.logger.warn({ err: err.message }, `could not write ${LOCAL_CODES_FILE}`),
    );
  }
  await deps.outbox.send(tenant, {
    channel: method === 'sms' ? 'sms' : 'email',
    to,
    subject: method === 'sms' ? undefined : `Your ${what} code`,
    body: `Your ${what} code is ${code}. It expires in ${minutes} minutes. If you did not ask for it, ignore this message.`,
    code,
    kind,
    // The account the code signs in: an address alone is no proof (a customer may sign up with
    // any email), so only this account reads the code back (outbox-view.ts).
    payload: { account },
  });
}
