// The event's door keys: Ed25519 key pairs that sign its tickets' QR codes (ticket-code.ts), so a
// scanner device holding the public keys (`GET /events/:id/door-keys`) checks a code with no
// network. They live in one tenant kv entry per event, out of the record store's reach (its
// generic routes read records, never kv), and only this actor, the single writer of the event's
// tickets, creates, reads and rotates them: a private key never leaves the server's memory and
// that entry, and is in no answer.
//
// Rotation: the new key signs every code from then on; a retired key stays listed (with
// `retiredAt`) and keeps verifying, because a static code signed with it lives as long as its
// ticket (printed, say) and nothing tells the server when the last copy is gone. A QR request
// signs the static code again with the active key, so holders who refresh move to it. An event
// keeps at most MAX_DOOR_KEYS keys: a rotation at the bound drops the oldest retired key (its
// static codes stop verifying: their holders must fetch the QR again), and is refused while that
// key's dynamic codes may still be live (retired less than the event's window + skew ago).
import { createPrivateKey, createPublicKey, generateKeyPairSync, randomBytes, sign, verify, type KeyObject } from 'node:crypto';
import type { ActorContext } from '../../core/actor/runtime.js';
import { appError } from '../../core/errors.js';
import type { StoredRecord } from '../../core/store/record.js';
import type { DenialReason, DoorKeyMsg } from './messages.js';
import { iso, secretOf, type ScannerState } from './state.js';
import {
  codeTag,
  ED25519_SIGNATURE_LENGTH,
  HMAC_SIGNATURE_LENGTH,
  KID_LENGTH,
  signedMessage,
  verifySignature,
  withinWindow,
} from './ticket-code.js';
import { ticketOp } from './ticket-ops.js';
import type { DoorKeyring, StoredKey } from './door-keyring.js';

/** event id → StoredRing. */
export const DOOR_KEYS_NS = 'event-door-keys';

/** Keys an event keeps (the active one and those retired). */
export const MAX_DOOR_KEYS = 8;

/** Oldest first; the last key is the active one. */
interface StoredRing {
  keys: StoredKey[];
}


export interface DoorKeyView {
  kid: string;
  alg: 'Ed25519';
  publicKey: string;
  createdAt: string;
  retiredAt: string | null;
}

export interface DoorKeysReply {
  eventId: string;
  activeKid: string;
  keys: DoorKeyView[];
}

/** What a QR request answers: the ticket and its codes, signed now. */
export interface QrReply {
  ticket: StoredRecord;
  code: string;
  staticCode: string;
  at: number;
  windowMs: number;
}

const jwk = (k: StoredKey, priv: boolean) => ({ kty: 'OKP', crv: 'Ed25519', x: k.x, ...(priv ? { d: k.d } : {}) });

function ringOf(keys: StoredKey[]): DoorKeyring {
  const publics = new Map<string, KeyObject>();
  for (const k of keys) publics.set(k.kid, createPublicKey({ key: jwk(k, false), format: 'jwk' }));
  return { keys, publics };
}

/** The event's keys (none yet: an empty ring, so a scan does not read the store again). */
function ring(st: ScannerState): DoorKeyring {
  st.doorKeys ??= ringOf(st.store.getKv<StoredRing>(st.tenant, DOOR_KEYS_NS, st.eventId)?.keys ?? []);
  return st.doorKeys;
}

function newKey(taken: StoredKey[], now: number): StoredKey {
  const { privateKey } = generateKeyPairSync('ed25519');
  const { x, d } = privateKey.export({ format: 'jwk' });
  let kid: string;
  do kid = randomBytes(6).toString('base64url');
  while (taken.some((k) => k.kid === kid));
  return { kid, x: x!, d: d!, createdAt: now, retiredAt: null };
}

function save(st: ScannerState, ctx: ActorContext, keys: StoredKey[]): DoorKeyring {
  ctx.batch.putKv(st.tenant, DOOR_KEYS_NS, st.eventId, { keys } satisfies StoredRing);
  st.doorKeys = ringOf(keys);
  return st.doorKeys;
}

/** The ring with an active key: the event's first key is made on first need. */
function active(st: ScannerState, ctx: ActorContext): DoorKeyring {
  const r = ring(st);
  return r.keys.length > 0 ? r : save(st, ctx, [newKey([], ctx.clock.now())]);
}

function signer(r: DoorKeyring): { kid: string; key: KeyObject } {
  const k = r.keys[r.keys.length - 1];
  if (r.signer?.kid !== k.kid) r.signer = { kid: k.kid, key: createPrivateKey({ key: jwk(k, true), format: 'jwk' }) };
  return r.signer;
}

function signature(r: DoorKeyring, ticketId: string, stamp: number | 'S', tag: string): string {
  const s = signer(r);
  return s.kid + sign(null, signedMessage(ticketId, stamp, tag), s.key).toString('base64url');
}

/** The ticket with a dynamic code signed now and its static code, both with the active key. */
export function qrCodes(st: ScannerState, msg: Extract<DoorKeyMsg, { type: 'qr' }>, ctx: ActorContext): QrReply {
  // The ticket's checks (404, 409 for a refunded or cancelled one) and its secret, minted on first need.
  const { secret, ticket, windowMs } = ticketOp(st, { type: 'secret', ticketId: msg.ticketId }, ctx) as { secret: string; ticket: StoredRecord; windowMs: number };
  const r = active(st, ctx);
  const tag = codeTag(secret);
  const at = ctx.clock.now();
  const id = ticket.sk;
  return { ticket, at, windowMs, code: `${id}:${at}:${signature(r, id, at, tag)}`, staticCode: `${id}:S:${signature(r, id, 'S', tag)}` };
}

function view(k: StoredKey): DoorKeyView {
  return { kid: k.kid, alg: 'Ed25519', publicKey: k.x, createdAt: iso(k.createdAt), retiredAt: k.retiredAt === null ? null : iso(k.retiredAt) };
}

function reply(st: ScannerState, r: DoorKeyring): DoorKeysReply {
  return { eventId: st.eventId, activeKid: r.keys[r.keys.length - 1].kid, keys: r.keys.map(view) };
}

/** The event's public keys, newest first (the first key is made on first need). */
export function doorKeys(st: ScannerState, ctx: ActorContext): DoorKeysReply {
  const out = reply(st, active(st, ctx));
  out.keys.reverse();
  return out;
}

/** A new active key; the old one stays listed, retired (see the top of this file for when one is dropped). */
export function rotateDoorKeys(st: ScannerState, ctx: ActorContext): DoorKeysReply {
  const now = ctx.clock.now();
  const keys = [...ring(st).keys];
  if (keys.length >= MAX_DOOR_KEYS) {
    const oldest = keys[0];
    const liveMs = st.ev!.codeWindowMs + st.ev!.codeSkewMs;
    if (oldest.retiredAt !== null && now - oldest.retiredAt < liveMs) {
      throw appError('ERR_CONFLICT', `event ${st.eventId} keeps ${MAX_DOOR_KEYS} door keys and the oldest was retired less than ${liveMs / 1000} s ago: its dynamic codes may still be live`);
    }
    keys.shift();
  }
  const last = keys[keys.length - 1];
  if (last) keys[keys.length - 1] = { ...last, retiredAt: now };
  keys.push(newKey(keys, now));
  save(st, ctx, keys);
  return doorKeys(st, ctx);
}

/**
 * Why a signed code (dynamic, or static when `stamp` is 'S') of ticket `ticketId` does not admit
 * at `at`: `bad_signature` when no listed key (or, for a legacy code, the ticket's secret) signed
 * it over the ticket's current code generation, `expired_code` outside the event's window;
 * undefined when it is good.
 */
export function signedCodeRefusal(st: ScannerState, ticketId: string, stamp: number | 'S', sig: string, at: number): DenialReason | undefined {
  const secret = secretOf(st, ticketId);
  if (!secret) return 'bad_signature';
  let ok = false;
  if (sig.length === ED25519_SIGNATURE_LENGTH) {
    const key = ring(st).publics.get(sig.slice(0, KID_LENGTH));
    const raw = Buffer.from(sig.slice(KID_LENGTH), 'base64url');
    // Only the canonical base64url spelling: one code, one text.
    ok = !!key && raw.length === 64 && raw.toString('base64url') === sig.slice(KID_LENGTH) && verify(null, signedMessage(ticketId, stamp, codeTag(secret)), key, raw);
  } else if (sig.length === HMAC_SIGNATURE_LENGTH && stamp !== 'S') {
    ok = verifySignature(secret, { ticketId, timestamp: stamp, signature: sig });
  }
  if (!ok) return 'bad_signature';
  if (stamp !== 'S' && !withinWindow(stamp, at, st.ev!.codeWindowMs, st.ev!.codeSkewMs)) return 'expired_code';
  return undefined;
}
