// What the edge knows of the caller of an auth flow: its address and the device it says it is.
import { createHash } from 'node:crypto';

export interface ClientInfo {
  ip: string;
  /**
   * Digest of x-device-id (else of x-client-info); undefined when neither is sent. A fingerprint
   * for the trusted-device check of 2FA only: it never selects an organisation.
   */
  device?: string;
  /** The x-device-token header as sent (device-token.ts): the secret that selects the device's organisation. */
  deviceToken?: string;
  /** A short human label for the device (from x-client-info), for the trusted-devices list. */
  deviceLabel?: string;
}

/** The device key (a digest, so raw device ids are never stored), its label and its device token. */
export function deviceOf(headers: Readonly<Record<string, string>>): { device?: string; deviceLabel?: string; deviceToken?: string } {
  const token = headers['x-device-token']?.trim();
  // Longer than any token this server issues: ignored rather than digested.
  const tokenPart = token && token.length <= 128 ? { deviceToken: token } : {};
  const id = headers['x-device-id']?.trim();
  const info = headers['x-client-info']?.trim();
  let deviceLabel: string | undefined;
  if (info) {
    try {
      const parsed = JSON.parse(info) as Record<string, unknown>;
      const label = [parsed.device, parsed.OS ?? parsed.os, parsed.userAgent].find((v) => typeof v === 'string' && v);
      if (typeof label === 'string') deviceLabel = label.slice(0, 120);
    } catch {
      // Not JSON: still usable as a fingerprint, just without a label.
    }
  }
  const source = id ? `id\u0000${id}` : info ? `info\u0000${info}` : undefined;
  if (!source) return { deviceLabel, ...tokenPart };
  return { device: createHash('sha256').update(source).digest('hex').slice(0, 40), deviceLabel, ...tokenPart };
}
