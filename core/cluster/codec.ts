// One binary encoding for everything cluster mode sends between nodes and keeps in the stream:
// msgpack (msgpackr, already how LMDB stores values), with structured clone so Dates, Maps, Sets,
// Buffers and `undefined` survive the trip the way they would in-process.
import { Packr } from 'msgpackr';

const packr = new Packr({ structuredClone: true, useRecords: false });
/**
 * The same msgpack, with objects of a repeated shape written as records: the shape's keys once per
 * message, then only its values. A commit stream message carries many ops of a few shapes (a group
 * of door scans is a third smaller), and every byte of it is copied several times by nats-server's
 * file store. Each message defines its own records, so any decoder reads it, `decode` below included.
 */
const compactPackr = new Packr({ structuredClone: true, useRecords: true });

export function encode(value: unknown): Uint8Array {
  return packr.pack(value);
}

/** `encode` with repeated object shapes written once per message (see compactPackr). */
export function encodeCompact(value: unknown): Uint8Array {
  return compactPackr.pack(value);
}

export function decode<T = unknown>(data: Uint8Array): T {
  return packr.unpack(data) as T;
}
