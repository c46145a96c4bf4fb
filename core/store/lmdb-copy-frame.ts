// A tenant copy's entries as one binary frame (lmdb-tenant-copy.ts, carried by snapshots.ts): no
// msgpack and no object per entry on either side, since a large tenant's copy is millions of keys
// and the node taking it over spends its time per key. Each entry is
//   tag u8 (database | kind << 4), key length u16, value length u32, key bytes, value bytes
// Keys are always the stored (ordered-binary) bytes, the same on every node. A value is either its
// stored bytes (Stored: every database whose values carry no node-specific msgpack structures) or
// a value encoded apart (Decoded: records and log entries, whose stored bytes only the writing
// node's structures can read, and entries made from values rather than read from LMDB).
// A frame comes from the stream, so a reader checks every length against the frame before use.
import { Packr } from 'msgpackr';
import { appError } from '../errors.js';

/** Which database an entry belongs to (a copy's entries name it by number). */
export const enum CopyDb {
  Records = 0,
  Index = 1,
  Logs = 2,
  Kv = 3,
  Meta = 4,
  /** The organisations: only in a platform copy (lmdb-platform-copy.ts). */
  Orgs = 5,
}

/** How an entry's value travels. */
export const enum CopyValue {
  /** The stored bytes, written back as they are. */
  Stored = 0,
  /** A value encoded with `valueCodec`, decoded and stored through the database's own encoding. */
  Decoded = 1,
}

/** tag, key length, value length. */
export const ENTRY_HEAD = 7;
/** LMDB's largest key (lmdb-js builds it with the default 1978 bytes). */
export const MAX_KEY_BYTES = 1978;

/** The encoding of Decoded values: structured clone keeps Dates, Maps, Buffers and `undefined`. */
const valueCodec = new Packr({ structuredClone: true, useRecords: false });

export function encodeCopyValue(value: unknown): Uint8Array {
  return valueCodec.pack(value);
}

/**
 * Builds a frame in one growing buffer. `room` bytes are kept at its start for the carrier's own
 * header; `fits` says whether an entry of that size still goes in under `maxBytes`.
 */
export class CopyFrameWriter {
  private buf: Buffer;
  private pos: number;
  entries = 0;

  /** Where the last entry's key starts in the frame (lastKey). */
  private keyAt = 0;
  private keyLength = 0;

  constructor(
    private readonly room: number,
    private readonly maxBytes: number,
    initialBytes = Math.min(maxBytes, 64 * 1024),
  ) {
    this.buf = Buffer.allocUnsafe(initialBytes + room);
    this.pos = room;
  }

  /** The last entry's key, as a view of the frame (the frame's bytes are never written twice). */
  lastKey(): Buffer {
    return this.buf.subarray(this.keyAt, this.keyAt + this.keyLength);
  }

  /** Bytes of entries so far (the carrier's room not counted). */
  get bytes(): number {
    return this.pos - this.room;
  }

  fits(keyBytes: number, valueBytes: number): boolean {
    return this.bytes + ENTRY_HEAD + keyBytes + valueBytes <= this.maxBytes;
  }

  add(db: CopyDb, kind: CopyValue, key: Uint8Array, value: Uint8Array): void {
    if (key.length === 0 || key.length > MAX_KEY_BYTES) throw new Error(`a copied key of ${key.length} bytes`);
    const need = this.pos + ENTRY_HEAD + key.length + value.length;
    if (need > this.buf.length) {
      const grown = Buffer.allocUnsafe(Math.max(need, Math.min(this.buf.length * 2, this.maxBytes + this.room)));
      this.buf.copy(grown, 0, 0, this.pos);
      this.buf = grown;
    }
    const b = this.buf;
    b[this.pos] = db | (kind << 4);
    b.writeUInt16LE(key.length, this.pos + 1);
    b.writeUInt32LE(value.length, this.pos + 3);
    this.pos += ENTRY_HEAD;
    this.keyAt = this.pos;
    this.keyLength = key.length;
    this.pos = put(b, this.pos, key);
    this.pos = put(b, this.pos, value);
    this.entries++;
  }

  /** The frame, with the carrier's room at its start. */
  finish(): Buffer {
    return this.buf.subarray(0, this.pos);
  }
}

/**
 * Copies `src` into `b` at `at`. Most keys and values are short (an index entry's value is a
 * byte), where a loop costs a fraction of TypedArray#set's call (measured: `set` was 21% of an
 * export's time).
 */
function put(b: Buffer, at: number, src: Uint8Array): number {
  const n = src.length;
  if (n > 96) {
    b.set(src, at);
    return at + n;
  }
  for (let i = 0; i < n; i++) b[at + i] = src[i];
  return at + n;
}

/** Why a frame cannot be read: the load stops with this rather than write part of a bad chunk. */
function malformed(what: string): Error {
  return appError('ERR_UNAVAILABLE', `a tenant copy's chunk is malformed: ${what}`);
}

/**
 * Reads a frame's entries, calling `fn` for each with views into `frame` (valid while the frame
 * is). Every entry is checked before any is given: a frame is all good or rejected whole.
 * `expected` is the entry count the carrier declares; `lastDb` the highest database it may name
 * (a tenant's copy: Meta; a platform copy: Orgs).
 */
export function readCopyFrame(
  frame: Uint8Array,
  expected: number,
  fn: (db: CopyDb, kind: CopyValue, key: Uint8Array, value: Uint8Array) => void,
  lastDb: CopyDb = CopyDb.Meta,
): void {
  const view = new DataView(frame.buffer, frame.byteOffset, frame.byteLength);
  const end = frame.byteLength;
  let n = 0;
  for (let p = 0; p < end; n++) {
    if (p + ENTRY_HEAD > end) throw malformed(`an entry header cut at byte ${p} of ${end}`);
    const tag = frame[p];
    const db = tag & 0x0f;
    const kind = tag >> 4;
    if (db > lastDb || kind > CopyValue.Decoded) throw malformed(`an entry tag ${tag} at byte ${p}`);
    const kl = view.getUint16(p + 1, true);
    const vl = view.getUint32(p + 3, true);
    if (kl === 0 || kl > MAX_KEY_BYTES) throw malformed(`a key of ${kl} bytes at byte ${p}`);
    p += ENTRY_HEAD + kl + vl;
    if (p > end) throw malformed(`an entry of ${kl} + ${vl} bytes past the chunk's end (${end})`);
  }
  if (n !== expected) throw malformed(`${n} entries where its header says ${expected}`);
  for (let p = 0; p < end; ) {
    const tag = frame[p];
    const kl = view.getUint16(p + 1, true);
    const vl = view.getUint32(p + 3, true);
    const k = p + ENTRY_HEAD;
    fn((tag & 0x0f) as CopyDb, (tag >> 4) as CopyValue, frame.subarray(k, k + kl), frame.subarray(k + kl, k + kl + vl));
    p = k + kl + vl;
  }
}

/** A Decoded entry's value; a value that does not decode fails the load with a clear error. */
export function decodeCopyValue(bytes: Uint8Array): unknown {
  try {
    return valueCodec.unpack(bytes);
  } catch (err) {
    throw malformed(`a value that does not decode (${(err as Error).message})`);
  }
}
