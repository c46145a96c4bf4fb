// What the auth actors (accounts and orgs, credentials, codes and challenges, refresh families,
// cards, trusted devices, org settings) accept and answer, and their kinds' names.
import type { StoredRecord } from '../../core/store/record.js';
import type { Org } from '../../core/store/store.js';
import type { ApiKeyData, CardStatus, SecurityData, SecuritySettings, SubjectKind, TwoFactorMethod } from './model.js';

export const ACCOUNTS = 'auth-accounts';

export const ORGS = 'auth-orgs';

export type AccountsMsg =
  | {
      type: 'createUser';
      email: string;
      name?: string;
      roles: string[];
      employeeId?: string;
      phone?: string;
      passwordHash: string;
      createdBy?: string;
    }
  | { type: 'setEmployeeId'; userId: string; employeeId: string }
  | { type: 'deleteUser'; userId: string }
  | { type: 'setUserStatus'; userId: string; status: 'active' | 'disabled'; by: string }
  | { type: 'createApp'; name: string; domains: string[]; secretHash: string; createdBy: string }
  | { type: 'revokeApp'; appId: string; by: string }
  | { type: 'createApiKey'; data: ApiKeyData }
  | { type: 'deleteApiKey'; id: string }
  | { type: 'createCustomer'; email: string; name?: string; phone?: string; passwordHash: string }
  /** A staff sign-in (key `staff`): answers the device token to send back as x-device-token. */
  | { type: 'noteSignIn'; userId: string; email?: string; deviceToken?: string }
  /** Forgets these device tokens of the organisation if they are still expired (key `staff`). */
  | { type: 'expireDeviceTokens'; keys: string[] };

export interface CreateOrgMsg {
  type: 'createOrg';
  orgName: string;
  email: string;
  name?: string;
  passwordHash: string;
  /** The rate-limit plan to write on the organisation; none: the server's default plan applies. */
  plan?: string;
  /** Start in the spec's open storefront (no token needed for tabs and service points); default closed. */
  openStorefront?: boolean;
}

export interface CreatedOrg {
  org: Org;
  user: StoredRecord;
}

/**
 * The sweep (sweep.ts): before device tokens, a client-chosen x-device-id selected the org; those
 * `_global` entries mean nothing now and are forgotten.
 */
export interface ForgetDeviceOrgsMsg {
  type: 'forgetDeviceOrgs';
}

/** What the orgs actor (tenant `_global`, key `orgs`) accepts. */
export type OrgsMsg = CreateOrgMsg | ForgetDeviceOrgsMsg;

export const SECURITY_ACTOR = 'auth-security';

export type SecurityMsg =
  | { type: 'setPassword'; hash: string; subjectType: SecurityData['subjectType'] }
  | { type: 'setPin'; hash: string }
  | { type: 'removePin' }
  | { type: 'totpBegin'; secret: string; subjectType: SecurityData['subjectType'] }
  | { type: 'totpConfirm'; code: string }
  | { type: 'enable'; method: TwoFactorMethod; subjectType: SecurityData['subjectType'] }
  | { type: 'disable'; code?: string }
  | { type: 'setBackup'; hashes: string[] }
  | { type: 'consume'; code: string }
  | { type: 'proveEmail'; email: string; subjectType: SecurityData['subjectType']; takeOver: boolean }
  | { type: 'resetPassword'; hash: string; email: string; subjectType: SecurityData['subjectType'] }
  /** The sweep (sweep.ts): forget the account's revocation once every token it could stop has expired. */
  | { type: 'expireRevocation'; lifeMs: number };

/** What proving an address or resetting a password did (email-proof.ts, recovery.ts). */
export interface ProofResult {
  ok: true;
  /** Credentials someone set before the address was proven were dropped. */
  tookOver: boolean;
  /** When the account's earlier sessions were revoked (ms); none: nothing was revoked. */
  revokedAt?: number;
}

export interface ConsumeResult {
  ok: boolean;
  via?: 'totp' | 'backup';
}

export const CHALLENGE_ACTOR = 'auth-challenge';

export const MAGIC_ACTOR = 'auth-magic';

export const RESET_ACTOR = 'auth-reset';

export const VERIFY_ACTOR = 'auth-verify';

export interface Challenge {
  sub: string;
  kind: SubjectKind;
  email: string;
  method: TwoFactorMethod;
  reason: 'org' | 'personal' | 'new-device';
  /** Where the code went (email or phone). */
  to?: string;
  codeHash?: string;
  salt?: string;
  /** The record holding the authenticator (the person's customer record). */
  factorSubject?: string;
  device?: string;
  attempts: number;
  sends: number;
  createdAt: number;
  expiresAt: number;
}

export type ChallengeMsg =
  | { type: 'create'; ch: Challenge }
  | { type: 'verify'; code: string }
  | { type: 'resend'; codeHash: string; salt: string }
  /** The sweep (sweep.ts): forget the challenge if it has expired. */
  | { type: 'expire' };

export type ChallengeReply =
  | { status: 'ok'; ch: Challenge }
  | { status: 'wrong'; attemptsLeft: number }
  | { status: 'gone' }
  | { status: 'limit' }
  | { status: 'not-sendable' };

export type CodeMsg =
  | { type: 'issue'; sub?: string; kind?: SubjectKind; codeHash: string; salt: string }
  | { type: 'redeem'; code: string }
  /** The sweep (sweep.ts): forget the entry once the code has expired and its sends left the limit's window. */
  | { type: 'expire' };

export type CodeReply =
  | { status: 'ok'; sub?: string; kind?: SubjectKind }
  | { status: 'issued' }
  | { status: 'limit'; retryAfterSeconds: number }
  | { status: 'wrong'; attemptsLeft: number }
  | { status: 'gone' };

export type MagicMsg = CodeMsg;

export type MagicReply = CodeReply;

export const REFRESH_ACTOR = 'auth-refresh';

export interface Family {
  sub: string;
  kind: SubjectKind;
  current: string;
  revoked: boolean;
  revokedReason?: string;
  rotations: number;
  createdAt: number;
  rotatedAt: number;
  /** When the newest token of the family expires; the sweeper forgets the family after it. */
  expiresAt: number;
}

export type RefreshMsg =
  | { type: 'start'; sub: string; kind: SubjectKind; jti: string; expiresAt: number }
  | { type: 'rotate'; jti: string; newJti: string; expiresAt: number }
  | { type: 'revoke'; reason: string }
  /**
   * The sweep (sweep.ts): forget the family a minute after its newest token expired, and the
   * session's revocation once every token it could stop has expired (`revocationLifeMs` after it).
   */
  | { type: 'expire'; revocationLifeMs: number };

export type RefreshReply =
  | { status: 'ok'; family: Family }
  | { status: 'reuse' }
  | { status: 'revoked' }
  | { status: 'unknown' };

export const CARD_ACTOR = 'auth-card';

export interface Caller {
  userId: string;
  employeeId?: string;
  admin: boolean;
}

export type CardMsg =
  | { type: 'register'; employeeId: string; userId: string; label?: string; caller: Caller }
  | { type: 'status'; status: CardStatus; caller: Caller };

export const TRUSTED_DEVICES_ACTOR = 'auth-trusted-devices';

export type TrustedDevicesMsg =
  | { type: 'trust'; device: string; label?: string }
  /** One device by the start of its key (the listed id), or every device without `id`. */
  | { type: 'forget'; id?: string };

export const ORG_SETTINGS_ACTOR = 'auth-org';

export type OrgSettingsMsg = { type: 'update'; patch: Partial<SecuritySettings> };
