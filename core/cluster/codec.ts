// One binary encoding for everything cluster mode sends between nodes and keeps in the stream:
// msgpack (msgpackr, already how LMDB stores values), with structured clone so Dates, Maps, Sets,
// Buffers and `undefined` survive the trip the way they would in-process.
import { Packr } from 'msgpackr';

const packr = new Packr({ structuredClone: true, useRecords: false });

export function encode(value: unknown): Uint8Array {
  return packr.pack(value);
}

export function decode<T = unknown>(data: Uint8Array): T {
  return packr.unpack(data) as T;
}
