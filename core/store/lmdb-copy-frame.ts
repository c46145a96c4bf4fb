// A tenant copy's entries as one binary frame (lmdb-tenant-copy.ts, carried by snapshots.ts): no
// msgpack and no object per entry on either side, since a large tenant's copy is millions of keys
// and the node taking it over spends its time per key. Each entry is (format 3, FRAME_FORMAT)
//   tag u8 (database | kind << 4), shared varint, rest varint, value length varint, rest of the key, value
// where the key is the previous entry's first `shared` bytes and then `rest` bytes of its own (the
// first entry of a frame shares none), varints are unsigned LEB128. Keys come in each database's
// order, so neighbours share most of their bytes: an index entry [tenant, datatype, path, value, id]
// repeats all but its id (measured on the door's tickets: an index key 88 bytes, 62 of them shared;
// a ticket's copy 1,765 bytes in format 2, which wrote every key whole behind a 7-byte header:
//   tag u8, key length u16, value length u32, key bytes, value bytes).
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

/** The format a frame's entries are in (what CopyFrameWriter writes; readCopyFrame also reads 2). */
export const FRAME_FORMAT = 3;
/** Format 2's entry header: tag, key length u16, value length u32. */
const ENTRY_HEAD_2 = 7;
/** Format 3's entry header at most: tag, two varints of a key's length (< 2^14), one of a value's (< 2^35). */
export const ENTRY_HEAD = 1 + 2 + 2 + 5;
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

  /** The last entry's whole key (the next one writes only what differs from it). */
  private readonly prev = Buffer.allocUnsafe(MAX_KEY_BYTES);
  private prevLength = 0;

  constructor(
    private readonly room: number,
    private readonly maxBytes: number,
    initialBytes = Math.min(maxBytes, 64 * 1024),
  ) {
    this.buf = Buffer.allocUnsafe(initialBytes + room);
    this.pos = room;
  }

  /** The last entry's key, as a view valid until the next `add`. */
  lastKey(): Buffer {
    return this.prev.subarray(0, this.prevLength);
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
    const prev = this.prev;
    const n = key.length;
    const most = n < this.prevLength ? n : this.prevLength;
    let shared = 0;
    while (shared < most && prev[shared] === key[shared]) shared++;
    let p = this.pos;
    b[p++] = db | (kind << 4);
    p = varint(b, p, shared);
    p = varint(b, p, n - shared);
    p = varint(b, p, value.length);
    for (let i = shared; i < n; i++) b[p++] = prev[i] = key[i];
    this.prevLength = n;
    this.pos = put(b, p, value);
    this.entries++;
  }

  /** The frame, with the carrier's room at its start. */
  finish(): Buffer {
    return this.buf.subarray(0, this.pos);
  }
}

/** Writes `n` (< 2^35) as an unsigned LEB128 varint at `at`; where it ends. */
function varint(b: Buffer, at: number, n: number): number {
  while (n >= 0x80) {
    b[at++] = (n & 0x7f) | 0x80;
    n = Math.floor(n / 128);
  }
  b[at++] = n;
  return at;
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
 * Reads a frame's entries, calling `fn` for each with views valid until `fn` returns (the key is
 * rebuilt in a buffer the next entry reuses; the value is a view into `frame`). Every entry is
 * checked before any is given: a frame is all good or rejected whole. `expected` is the entry count
 * the carrier declares; `lastDb` the highest database it may name (a tenant's copy: Meta; a platform
 * copy: Orgs); `format` the frame's (FRAME_FORMAT, or 2 for a snapshot an older node wrote).
 */
export function readCopyFrame(
  frame: Uint8Array,
  expected: number,
  fn: (db: CopyDb, kind: CopyValue, key: Uint8Array, value: Uint8Array) => void,
  lastDb: CopyDb = CopyDb.Meta,
  format: number = FRAME_FORMAT,
): void {
  if (format === 2) return readFrame2(frame, expected, fn, lastDb);
  if (format !== FRAME_FORMAT) throw malformed(`frame format ${format}`);
  const end = frame.byteLength;
  const v = { at: 0 };
  let n = 0;
  let prevLength = 0;
  for (let p = 0; p < end; n++) {
    const tag = frame[p];
    checkTag(tag, p, lastDb);
    v.at = p + 1;
    const shared = readVarint(frame, v, end);
    const rest = readVarint(frame, v, end);
    const vl = readVarint(frame, v, end);
    if (shared > prevLength) throw malformed(`a key sharing ${shared} bytes with a key of ${prevLength} at byte ${p}`);
    const kl = shared + rest;
    if (kl === 0 || kl > MAX_KEY_BYTES) throw malformed(`a key of ${kl} bytes at byte ${p}`);
    p = v.at + rest + vl;
    if (p > end) throw malformed(`an entry of ${kl} + ${vl} bytes past the chunk's end (${end})`);
    prevLength = kl;
  }
  if (n !== expected) throw malformed(`${n} entries where its header says ${expected}`);
  const key = Buffer.allocUnsafe(MAX_KEY_BYTES);
  for (let p = 0; p < end; ) {
    const tag = frame[p];
    v.at = p + 1;
    const shared = readVarint(frame, v, end);
    const rest = readVarint(frame, v, end);
    const vl = readVarint(frame, v, end);
    let k = v.at;
    for (let i = shared; i < shared + rest; i++) key[i] = frame[k++];
    fn((tag & 0x0f) as CopyDb, (tag >> 4) as CopyValue, key.subarray(0, shared + rest), frame.subarray(k, k + vl));
    p = k + vl;
  }
}

function checkTag(tag: number, p: number, lastDb: CopyDb): void {
  if ((tag & 0x0f) > lastDb || tag >> 4 > CopyValue.Decoded) throw malformed(`an entry tag ${tag} at byte ${p}`);
}

/** An unsigned LEB128 varint at `v.at` (moved past it), of at most 5 bytes, within `end`. */
function readVarint(frame: Uint8Array, v: { at: number }, end: number): number {
  let n = 0;
  let scale = 1;
  for (let i = 0; i < 5; i++) {
    if (v.at >= end) throw malformed(`an entry header cut at byte ${v.at} of ${end}`);
    const b = frame[v.at++];
    n += (b & 0x7f) * scale;
    if (b < 0x80) return n;
    scale *= 128;
  }
  throw malformed(`a length of more than 5 bytes at byte ${v.at}`);
}

/** Format 2 (every key whole behind a 7-byte header): snapshots written before format 3. */
function readFrame2(frame: Uint8Array, expected: number, fn: (db: CopyDb, kind: CopyValue, key: Uint8Array, value: Uint8Array) => void, lastDb: CopyDb): void {
  const view = new DataView(frame.buffer, frame.byteOffset, frame.byteLength);
  const end = frame.byteLength;
  let n = 0;
  for (let p = 0; p < end; n++) {
    if (p + ENTRY_HEAD_2 > end) throw malformed(`an entry header cut at byte ${p} of ${end}`);
    checkTag(frame[p], p, lastDb);
    const kl = view.getUint16(p + 1, true);
    const vl = view.getUint32(p + 3, true);
    if (kl === 0 || kl > MAX_KEY_BYTES) throw malformed(`a key of ${kl} bytes at byte ${p}`);
    p += ENTRY_HEAD_2 + kl + vl;
    if (p > end) throw malformed(`an entry of ${kl} + ${vl} bytes past the chunk's end (${end})`);
  }
  if (n !== expected) throw malformed(`${n} entries where its header says ${expected}`);
  for (let p = 0; p < end; ) {
    const tag = frame[p];
    const kl = view.getUint16(p + 1, true);
    const vl = view.getUint32(p + 3, true);
    const k = p + ENTRY_HEAD_2;
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
