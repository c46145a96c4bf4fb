// A tenant copy's chunks come from the stream: a reader checks every length before use, and a
// malformed frame fails with a clear error (ERR_UNAVAILABLE), never a crash or a partial read.
import t from 'tap';
import { CopyDb, CopyFrameWriter, CopyValue, decodeCopyValue, encodeCopyValue, readCopyFrame } from '../../core/store/lmdb-copy-frame.js';
import { LmdbStore } from '../../core/store/lmdb-store.js';
import { keyValueToBuffer } from '../../core/store/lmdb-tenant-copy.js';
import { tempDir } from '../helpers/app.js';

function frame(): { bytes: Buffer; entries: number } {
  const w = new CopyFrameWriter(0, 1 << 20);
  w.add(CopyDb.Index, CopyValue.Stored, Buffer.from('acme\0k1'), Buffer.from([1]));
  w.add(CopyDb.Records, CopyValue.Decoded, Buffer.from('acme\0r1'), encodeCopyValue({ data: { a: 1 }, at: new Date(0) }));
  w.add(CopyDb.Meta, CopyValue.Stored, Buffer.from('usage'), Buffer.alloc(0));
  return { bytes: Buffer.from(w.finish()), entries: w.entries };
}

function read(bytes: Uint8Array, entries: number): Array<[number, number, string, number]> {
  const out: Array<[number, number, string, number]> = [];
  readCopyFrame(bytes, entries, (db, kind, key, value) => out.push([db, kind, Buffer.from(key).toString(), value.length]));
  return out;
}

t.test('copy frame - entries read back as written, values decoded as they were', async (t) => {
  const { bytes, entries } = frame();
  const got = read(bytes, entries);
  t.same(
    got.map(([db, kind, key]) => [db, kind, key]),
    [
      [CopyDb.Index, CopyValue.Stored, 'acme\0k1'],
      [CopyDb.Records, CopyValue.Decoded, 'acme\0r1'],
      [CopyDb.Meta, CopyValue.Stored, 'usage'],
    ],
  );
  let decoded: unknown;
  readCopyFrame(bytes, entries, (db, _kind, _key, value) => {
    if (db === CopyDb.Records) decoded = decodeCopyValue(value);
  });
  t.same(decoded, { data: { a: 1 }, at: new Date(0) });
});

t.test('copy frame - neighbouring keys travel as what differs from the one before, and read back whole', async (t) => {
  const w = new CopyFrameWriter(0, 1 << 20);
  const keys = Array.from({ length: 50 }, (_, i) => Buffer.from(`acme\0index\0ticket\0status\0valid\0t-${String(i).padStart(6, '0')}`));
  for (const k of keys) w.add(CopyDb.Index, CopyValue.Stored, k, Buffer.from([1]));
  w.add(CopyDb.Records, CopyValue.Stored, Buffer.from('acme\0r1'), Buffer.from('v'));
  const bytes = Buffer.from(w.finish());
  const got = read(bytes, w.entries);
  t.same(got.map(([, , key]) => key), [...keys.map(String), 'acme\0r1'], 'every key whole, in order, the last sharing nothing useful');
  const whole = keys.reduce((n, k) => n + k.length + 1, 0);
  t.ok(bytes.length < whole / 3, `${bytes.length} bytes for ${whole} bytes of keys and values`);
});

t.test('copy frame - a frame of format 2 (a snapshot an older node wrote) still reads', async (t) => {
  const entry = (tag: number, key: string, value: Buffer) => {
    const head = Buffer.alloc(7);
    head[0] = tag;
    head.writeUInt16LE(Buffer.byteLength(key), 1);
    head.writeUInt32LE(value.length, 3);
    return Buffer.concat([head, Buffer.from(key), value]);
  };
  const bytes = Buffer.concat([entry(CopyDb.Index, 'acme\0k1', Buffer.from([1])), entry(CopyDb.Records | (CopyValue.Decoded << 4), 'acme\0r1', Buffer.from(encodeCopyValue({ a: 1 })))]);
  const out: Array<[number, number, string, unknown]> = [];
  readCopyFrame(bytes, 2, (db, kind, key, value) => out.push([db, kind, Buffer.from(key).toString(), kind === CopyValue.Decoded ? decodeCopyValue(value) : value.length]), CopyDb.Meta, 2);
  t.same(out, [
    [CopyDb.Index, CopyValue.Stored, 'acme\0k1', 1],
    [CopyDb.Records, CopyValue.Decoded, 'acme\0r1', { a: 1 }],
  ]);
  t.throws(() => readCopyFrame(bytes, 2, () => undefined, CopyDb.Meta, 7), { code: 'ERR_UNAVAILABLE', message: /frame format 7/ }, 'a format this node does not know is refused');
});

t.test('copy frame - a malformed frame is refused whole with a clear error before any entry is given', async (t) => {
  const { bytes, entries } = frame();
  const cases: Array<[string, Uint8Array, number, RegExp]> = [
    ['cut in an entry header', bytes.subarray(0, bytes.length - 5 - 2), entries, /header cut/],
    ['cut in a key', bytes.subarray(0, bytes.length - 1), entries, /past the chunk's end/],
    ['an entry count that disagrees', bytes, entries + 1, /3 entries where its header says 4/],
    ['a database that does not exist', Buffer.concat([Buffer.from([9, 0, 1, 0, 65]), bytes]), entries + 1, /entry tag 9/],
    ['a value kind that does not exist', Buffer.concat([Buffer.from([0x21, 0, 1, 0, 65]), bytes]), entries + 1, /entry tag 33/],
    ['an empty key', Buffer.concat([Buffer.from([1, 0, 0, 0]), bytes]), entries + 1, /a key of 0 bytes/],
    ['a key longer than LMDB takes', Buffer.concat([Buffer.from([1, 0, 0xff, 0x7f, 0]), bytes]), entries + 1, /a key of 16383 bytes/],
    ['a key sharing more than the key before it has', Buffer.concat([Buffer.from([1, 5, 1, 0, 65]), bytes]), entries + 1, /sharing 5 bytes with a key of 0/],
    ['a length that never ends', Buffer.concat([Buffer.from([1, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01]), bytes]), entries + 1, /more than 5 bytes/],
    ['a value length past the end', Buffer.concat([bytes, Buffer.from([1, 0, 1, 0xff, 0xff, 0xff, 0xff, 0x0f, 65])]), entries + 1, /past the chunk's end/],
  ];
  for (const [name, b, n, message] of cases) {
    let given = 0;
    try {
      readCopyFrame(b, n, () => given++);
      t.fail(`${name}: read`);
    } catch (err) {
      t.match(err, { code: 'ERR_UNAVAILABLE', message }, name);
    }
    t.equal(given, 0, `${name}: no entry given`);
  }
});

t.test('copy frame - a value that does not decode fails with a clear error', async (t) => {
  t.throws(() => decodeCopyValue(Buffer.from([0x92, 0x01])), { code: 'ERR_UNAVAILABLE', message: /does not decode/ });
});

t.test('copy frame - a tenant copy naming the organisations database is refused and writes nothing; a platform copy writes it', async (t) => {
  const store = new LmdbStore({ path: tempDir(t), mapSizeGiB: 1 });
  t.teardown(() => store.close());
  const w = new CopyFrameWriter(0, 1 << 20);
  w.add(CopyDb.Kv, CopyValue.Decoded, keyValueToBuffer(['acme', 'ns', 'k']), encodeCopyValue('v'));
  w.add(CopyDb.Orgs, CopyValue.Decoded, keyValueToBuffer('evil'), encodeCopyValue({ id: 'evil', name: 'Evil' }));
  const bytes = Buffer.from(w.finish());
  await t.rejects(store.putTenantFrame('acme', bytes, w.entries), { code: 'ERR_UNAVAILABLE', message: /entry tag 21/ });
  t.equal(store.getOrg('evil'), undefined, 'no organisation written');
  t.equal(store.getKv('acme', 'ns', 'k'), undefined, 'nor the entry before it');
  await store.putPlatformFrame(bytes, w.entries);
  t.match(store.getOrg('evil'), { id: 'evil', name: 'Evil' }, 'a platform copy writes the organisation');
});
