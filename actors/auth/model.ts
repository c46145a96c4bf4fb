// What the auth area stores, and the public shapes it answers with.
//
// Profiles and credentials are kept apart: `user` (staff and applications) and `customer` records
// hold profile fields only; password and PIN hashes, application secrets and TOTP secrets live in
// `user_security` (same sk as the user or customer), backup codes hashed in `two_factor_backup`,
// API keys hashed in `apikey`. Public shapes are built field by field from an allow list, so a
// new stored field never leaks by accident.
//
// Cross-tenant data lives under the pseudo-tenant `_global` (never an org id: org ids start with
// a letter or digit): the email → orgs directory and each device's last organisation.
import { randomBytes } from 'node:crypto';
import type { StoredRecord } from '../../core/store/record.js';

export const USER = 'user';
export const CUSTOMER = 'customer';
export const SECURITY = 'user_security';
export const BACKUP = 'two_factor_backup';
export const APIKEY = 'apikey';
export const CARD = 'passcode_card';
export const SETTING = 'setting';

export const GLOBAL_TENANT = '_global';

/** kv namespaces. */
export const NS = {
  /** `_global`: one key per org the email has a staff account in → DirectoryEntry. */
  directory: (email: string) => `org_directory:${email}`,
  /** `_global`, retired: x-device-id digest → { orgId, at } (device tokens replace it; the sweeper deletes it). */
  deviceOrg: 'device_org',
  /** tenant: one key per trusted device of a person (by email). */
  trusted: (email: string) => `trusted_device:${email}`,
  challenge: 'auth_challenge',
  magic: 'auth_magic',
  /** tenant: one key per address → the password-reset code sent to it. */
  reset: 'auth_reset',
  /** tenant: one key per account (`staff:<sk>` or `customer:<sk>`) → its email-verification code. */
  verify: 'auth_verify',
  family: 'refresh_family',
} as const;

export type SubjectKind = 'staff' | 'customer';
export type TwoFactorMethod = 'email' | 'sms' | 'authenticator';
export type CardStatus = 'active' | 'revoked' | 'lost';
export const CARD_STATUSES: readonly CardStatus[] = ['active', 'revoked', 'lost'];

/** Staff roles an organisation's creator gets. */
export const FOUNDER_ROLES = ['User', 'Admin', 'ConfigAdmin'];
/** The roles routes check for privileges beyond a staff user's: granted only by a holder. */
export const PRIVILEGED_ROLES: readonly string[] = ['Admin', 'ConfigAdmin'];
/** Applications are users of this group (spec: app/register). */
export const SYSTEM_GROUP = 'System';

export interface UserData {
  email?: string;
  name?: string;
  roles: string[];
  employeeId?: string;
  phone?: string;
  status: 'active' | 'disabled' | 'revoked';
  /** `System` for applications. */
  group?: string;
  kind?: 'app';
  /** Applications: domains a key exchange may name (none: any). */
  domains?: string[];
  createdBy?: string;
  [field: string]: unknown;
}

export interface CustomerData {
  email?: string;
  name?: string;
  phone?: string;
  status?: string;
  [field: string]: unknown;
}

export interface SecurityData {
  subjectType: 'user' | 'customer' | 'app';
  passwordHash?: string;
  passwordChangedAt?: string;
  pinHash?: string;
  pinChangedAt?: string;
  /** Applications: SHA-256 of the secret. */
  secretHash?: string;
  totpSecret?: string;
  totpPending?: string;
  totpPendingAt?: number;
  lastTotpStep?: number;
  twoFactorEnabled?: boolean;
  twoFactorMethod?: TwoFactorMethod;
  /**
   * The address this account proved it receives mail at (normalized), by a code sent to it. The
   * account's email counts as proven only while it equals this (email-proof.ts).
   */
  emailProven?: string;
  emailProvenAt?: string;
  [field: string]: unknown;
}

export interface BackupData {
  codes: Array<{ hash: string; usedAt?: string }>;
  generatedAt: string;
}

export interface ApiKeyData {
  name: string;
  keyHash: string;
  /** First characters of the key, to recognise it in a list. */
  prefix: string;
  roles: string[];
  ownerId: string;
  createdBy: string;
  expiresAt?: string;
}

export interface CardData {
  employeeId: string;
  cardUid: string;
  userId: string;
  status: CardStatus;
  label?: string;
  statusChangedAt?: string;
  statusChangedBy?: string;
  registeredBy?: string;
}

export interface SecuritySettings {
  enableTwoFactorForUsers: boolean;
  enableTwoFactorForCustomers: boolean;
  enableNewDeviceAuthentication: boolean;
  /**
   * Off (the spec's default: the magic-code path performs no 2FA check): a magic code alone signs
   * in. On: a magic-code sign-in also passes the two-factor check that is due for the account.
   */
  requireTwoFactorForMagicCode: boolean;
}

export const DEFAULT_SECURITY_SETTINGS: SecuritySettings = {
  enableTwoFactorForUsers: false,
  enableTwoFactorForCustomers: false,
  enableNewDeviceAuthentication: false,
  requireTwoFactorForMagicCode: false,
};

export interface DirectoryEntry {
  /** Last sign-in (ms); 0 when never signed in. */
  lastUsedAt: number;
  addedAt: number;
}

export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

/** `Acme Coffee & Co.` → `acme-coffee-co-k3f9x2`: lowercase slug plus a random suffix. */
export function orgSlug(name: string): string {
  const base = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 40)
    .replace(/-+$/, '');
  const suffix = randomBytes(5).readUIntBE(0, 5).toString(36).padStart(6, '0').slice(-6);
  return `${base || 'org'}-${suffix}`;
}

export const ORG_ID = /^[a-z0-9][a-z0-9-]*$/;

export interface PublicUser {
  id: string;
  kind: SubjectKind;
  orgId: string;
  email?: string;
  name?: string;
  roles: string[];
  employeeId?: string;
  phone?: string;
  status?: string;
  customerId?: string;
  createdate: string;
  isPrimaryContact?: boolean;
  /** Whether the account proved its email (a code sent to it, a magic-code sign-in or a reset). */
  emailVerified?: boolean;
}

export function publicUser(rec: StoredRecord, orgId: string, primaryContactId?: string, emailVerified?: boolean): PublicUser {
  const d = rec.data as UserData;
  const out: PublicUser = { id: rec.sk, kind: 'staff', orgId, roles: [...(d.roles ?? [])], createdate: rec.createdate };
  if (emailVerified !== undefined) out.emailVerified = emailVerified;
  if (d.email) out.email = d.email;
  if (d.name) out.name = d.name;
  if (d.employeeId) out.employeeId = d.employeeId;
  if (d.phone) out.phone = d.phone;
  if (d.status) out.status = d.status;
  if (primaryContactId !== undefined) out.isPrimaryContact = primaryContactId === rec.sk;
  return out;
}

export function publicCustomer(rec: StoredRecord, orgId: string, emailVerified?: boolean): PublicUser {
  const d = rec.data as CustomerData;
  const out: PublicUser = { id: rec.sk, kind: 'customer', orgId, roles: [], customerId: rec.sk, createdate: rec.createdate };
  if (emailVerified !== undefined) out.emailVerified = emailVerified;
  if (d.email) out.email = String(d.email);
  if (d.name) out.name = String(d.name);
  if (d.phone) out.phone = String(d.phone);
  out.status = typeof d.status === 'string' ? d.status : 'active';
  return out;
}

export interface PublicCard {
  id: string;
  employeeId: string;
  userId: string;
  cardUid: string;
  status: CardStatus;
  label?: string;
  statusChangedAt?: string;
  createdate: string;
  modifydate: string;
}

export function publicCard(rec: StoredRecord): PublicCard {
  const d = rec.data as unknown as CardData;
  const out: PublicCard = {
    id: rec.sk,
    employeeId: d.employeeId,
    userId: d.userId,
    cardUid: d.cardUid,
    status: d.status,
    createdate: rec.createdate,
    modifydate: rec.modifydate,
  };
  if (d.label) out.label = d.label;
  if (d.statusChangedAt) out.statusChangedAt = d.statusChangedAt;
  return out;
}

export interface PublicApiKey {
  id: string;
  name: string;
  prefix: string;
  roles: string[];
  ownerId: string;
  createdate: string;
  expiresAt?: string;
}

export function publicApiKey(rec: StoredRecord): PublicApiKey {
  const d = rec.data as unknown as ApiKeyData;
  const out: PublicApiKey = { id: rec.sk, name: d.name, prefix: d.prefix, roles: [...d.roles], ownerId: d.ownerId, createdate: rec.createdate };
  if (d.expiresAt) out.expiresAt = d.expiresAt;
  return out;
}

export interface PublicApp {
  appId: string;
  name: string;
  status: string;
  domains: string[];
  createdate: string;
}

export function publicApp(rec: StoredRecord): PublicApp {
  const d = rec.data as UserData;
  return { appId: rec.sk, name: d.name ?? '', status: d.status, domains: [...(d.domains ?? [])], createdate: rec.createdate };
}

export function isApp(rec: StoredRecord | undefined): boolean {
  return !!rec && (rec.data as UserData).group === SYSTEM_GROUP;
}
