// Device tokens (issue 28 item 7): the organisation a device last signed into is remembered by a
// secret the server issued to that device at a staff sign-in, never by an id the client chose. The
// token is `<orgId>.<43 base64url chars>` (256 random bits); the store keeps only its digest, in
// the kv of the organisation it was issued for, so a token names one organisation for its whole
// life and no sign-in to another organisation can re-point it (that sign-in issues its own token).
// A passcode sign-in without orgid uses the organisation of the x-device-token it is sent.
import { digestSecret, newSecret } from '../../core/auth/password.js';

/** tenant kv namespace: digest of a device token's secret → DeviceEntry. */
export const DEVICE_TOKEN_NS = 'auth_device_token';

/** A token unused this long stops selecting its organisation (each sign-in with it renews it). */
export const DEVICE_TOKEN_IDLE_MS = 90 * 24 * 60 * 60_000;

export interface DeviceEntry {
  createdAt: number;
  usedAt: number;
}

const FORMAT = /^([A-Za-z0-9][A-Za-z0-9_-]{0,63})\.([A-Za-z0-9_-]{43})$/;

/** A new token for `tenant` and the kv key its entry is kept under. */
export function newDeviceToken(tenant: string): { token: string; key: string } {
  const secret = newSecret();
  return { token: `${tenant}.${secret}`, key: digestSecret(secret, 'device') };
}

/** The organisation a well-formed token claims and its kv key there; undefined for anything else. */
export function parseDeviceToken(token: string | undefined): { tenant: string; key: string } | undefined {
  const m = token ? FORMAT.exec(token) : null;
  return m ? { tenant: m[1], key: digestSecret(m[2], 'device') } : undefined;
}

export function deviceEntryLive(e: DeviceEntry | undefined, now: number): e is DeviceEntry {
  return e !== undefined && e.usedAt + DEVICE_TOKEN_IDLE_MS > now;
}
