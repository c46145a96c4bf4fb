// The auth area's API: the authentication flows of one node, each in its own file, sharing one
// failure limiter (per node) and one view of the accounts. Reads go straight to the store; every
// read-check-write goes through the actor that owns it.
import { AccountLookup } from './account-lookup.js';
import { ApiKeys } from './api-keys.js';
import { AppTokens } from './app-tokens.js';
import { SignInChallenges } from './challenges.js';
import type { AuthDeps } from './deps.js';
import { EmailVerification } from './email-verification.js';
import { FailureLimiter } from './limiter.js';
import { MagicCodes } from './magic-code.js';
import { OrgDirectory } from './org-directory.js';
import { Passcodes } from './passcodes.js';
import { Passwords } from './passwords.js';
import { PasswordRecovery } from './recovery.js';
import { Sessions } from './sessions.js';
import { SignUp } from './sign-up.js';
import { StaffAccounts } from './staff-accounts.js';
import { sweepExpired } from './sweep.js';
import { TwoFactorAdmin } from './two-factor.js';

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
}
