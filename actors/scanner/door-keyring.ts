// What the scanner actor holds of its event's Ed25519 door keys (door-keys.ts keeps and uses them):
// the types alone, so the actor's state can name them without importing the code that signs.
import type { KeyObject } from 'node:crypto';

/** One key as stored: `d` is the private key (JWK `d`, the 32-byte seed, base64url). */
export interface StoredKey {
  kid: string;
  /** The raw 32-byte public key, base64url (JWK `x`). */
  x: string;
  d: string;
  createdAt: number;
  retiredAt: number | null;
}

/** The event's keys as the actor holds them (ScannerState.doorKeys), loaded once per activation. */
export interface DoorKeyring {
  keys: StoredKey[];
  /** kid → public key, for verification. */
  readonly publics: Map<string, KeyObject>;
  /** The active key's private half, made on first signature. */
  signer?: { kid: string; key: KeyObject };
}
