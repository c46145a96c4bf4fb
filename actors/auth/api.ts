// The auth area's API: the authentication flows of one node, each in its own file, sharing one
// failure limiter (per node) and one view of the accounts. Reads go straight to the store; every
// read-check-write goes through the actor that owns it.
import type { Principal } from '../../core/auth/tokens.js';
import { appError } from '../../core/errors.js';
import type { StoredRecord } from '../../core/store/record.js';
import { AccountLookup } from './account-lookup.js';

import { ApiKeys } from './api-keys.js';
import { AppTokens } from './app-tokens.js';
import { SignInChallenges } from './challenges.js';
import type { AuthDeps } from './deps.js';
import { EmailVerification } from './email-verification.js';
import { FailureLimiter } from './limiter.js';
import { MagicCodes } from './magic-code.js';
import type { SecuritySettings } from './model.js';
import { OrgDirectory } from './org-directory.js';

import { Passcodes } from './passcodes.js';
import { Passwords } from './passwords.js';
import { PinAdmin } from './pin-admin.js';
import { PasswordRecovery } from './recovery.js';
import { Sessions } from './sessions.js';
import { SignUp } from './sign-up.js';
import { StaffAccounts } from './staff-accounts.js';
import { sweepExpired } from './sweep.js';
import { TwoFactorAdmin } from './two-factor.js';
import { ACCOUNTS, type AccountsMsg, ORG_SETTINGS_ACTOR, type OrgSettingsMsg } from './messages.js';

export class AuthApi {
  readonly limiter: FailureLimiter;
  readonly accounts: AccountLookup;
  readonly orgs: OrgDirectory;
  readonly sessions: Sessions;
  readonly challenges: SignInChallenges;
  readonly verification: EmailVerification;
  readonly recovery: PasswordRecovery;
  readonly passwords: Passwords;
  readonly signUp: SignUp;
  readonly staff: StaffAccounts;
  readonly magic: MagicCodes;
  readonly passcodes: Passcodes;
  readonly apps: AppTokens;
  readonly apiKeys: ApiKeys;
  readonly twoFactor: TwoFactorAdmin;

  constructor(readonly deps: AuthDeps) {
    this.limiter = new FailureLimiter(deps.clock);
    this.accounts = new AccountLookup(deps.store);
    this.orgs = new OrgDirectory(deps.store);
    this.sessions = new Sessions(deps, this.accounts);
    this.challenges = new SignInChallenges(deps, this.accounts, this.sessions, this.limiter);
    this.verification = new EmailVerification(deps, this.accounts, this.limiter);
    this.recovery = new PasswordRecovery(deps, this.accounts, this.limiter, this.verification);
    this.passwords = new Passwords(deps, this.accounts, this.sessions, this.challenges, this.limiter);
    this.signUp = new SignUp(deps, this.sessions, this.verification);
    this.staff = new StaffAccounts(deps, this.accounts);
    this.magic = new MagicCodes(deps, this.accounts, this.sessions, this.challenges, this.verification, this.limiter);
    this.passcodes = new Passcodes(deps, this.accounts, this.sessions, this.limiter);
    this.apps = new AppTokens(deps, this.accounts, this.limiter);
    this.apiKeys = new ApiKeys(deps, this.accounts);
    this.twoFactor = new TwoFactorAdmin(deps, this.accounts);
  }

  /** Forgets what has expired in every organisation (sweep.ts). */
  sweep(): Promise<number> {
    return sweepExpired(this.deps);
  }

  #pins?: PinAdmin;
  /** Setting and removing staff PINs, and what of a card UID each caller sees (pin-admin.ts). */
  get pins(): PinAdmin {
    return (this.#pins ??= new PinAdmin(this.deps, this.accounts));
  }

  /**
   * Deletes the caller's own staff account (refused for the primary contact) and ends the
   * session it signed in with; its other credentials stop at the next request (accounts-actor.ts).
   */
  async deleteSelf(tenant: string, p: Principal): Promise<{ deleted: true; id: string }> {
    if (this.accounts.org(tenant).primaryContactUserId === p.sub) {
      throw appError('ERR_FORBIDDEN', "the organisation's primary contact cannot delete their own account; make someone else the primary contact first");
    }
    await this.deps.runtime.ask(tenant, ACCOUNTS, 'staff', { type: 'deleteUser', userId: p.sub } satisfies AccountsMsg);
    if (p.sid) await this.sessions.revokeFamily(tenant, p.sid, 'account deleted');
    return { deleted: true, id: p.sub };
  }

  /** Merges `patch` into the organisation's security settings; answers them whole. */
  updateSecuritySettings(tenant: string, patch: Partial<SecuritySettings>): Promise<SecuritySettings> {
    return this.deps.runtime.ask(tenant, ORG_SETTINGS_ACTOR, 'settings', { type: 'update', patch } satisfies OrgSettingsMsg);
  }

  /** Revokes an application (404 when unknown): key exchanges are refused, its tokens stop. */
  revokeApp(tenant: string, appId: string, by: string): Promise<StoredRecord> {
    return this.deps.runtime.ask<StoredRecord>(tenant, ACCOUNTS, 'staff', { type: 'revokeApp', appId, by } satisfies AccountsMsg);
  }

  /** Deletes an API key (404 when unknown); it is refused from the next request on. */
  async deleteApiKey(tenant: string, id: string): Promise<void> {
    await this.deps.runtime.ask(tenant, ACCOUNTS, 'staff', { type: 'deleteApiKey', id } satisfies AccountsMsg);
  }
}
