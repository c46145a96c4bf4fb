// Long jobs on libuv's thread pool take turns (core/pool-work.ts), so the store's commits, which
// run on the same threads, always have some: password checks and media file writes alike wait for
// a turn, and past the queue they answer 503 with Retry-After.
import t from 'tap';
import { hashPassword, verifyPassword } from '../../core/auth/password.js';
import { AppError } from '../../core/errors.js';
import { MediaFiles } from '../../core/media-files.js';
import { configurePoolWork, DEFAULT_POOL_WORK, poolWork } from '../../core/pool-work.js';
import { tempDir } from '../helpers/app.js';

t.teardown(() => configurePoolWork(DEFAULT_POOL_WORK));

const refusal = (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (e: unknown) => e,
  );

t.test('jobs take turns within the budget; a full queue answers 503 naming the setting', async (t) => {
  configurePoolWork({ concurrency: 2, queueMax: 5 });
  const stored = await hashPassword('right password', { N: 1024, r: 8, p: 1 });
  let most = 0;
  const watch = setInterval(() => (most = Math.max(most, poolWork().running)), 1);
  const checks = Array.from({ length: 7 }, (_, i) => verifyPassword(i % 2 ? 'right password' : 'wrong', stored));
  t.same(poolWork(), { running: 2, waiting: 5 }, 'two run, five wait');
  const refused = await refusal(verifyPassword('one too many', stored));
  t.ok(refused instanceof AppError && refused.code === 'ERR_UNAVAILABLE' && refused.statusCode === 503, 'past the queue: 503');
  t.equal((refused as AppError).headers?.['retry-after'], '1', 'with Retry-After');
  t.match((refused as AppError).message, /a password check .*POOL_WORK_QUEUE_MAX/, 'naming the job and the setting');
  t.same(await Promise.all(checks), [false, true, false, true, false, true, false], 'every waiting check answers its own result');
  clearInterval(watch);
  t.ok(most <= 2, `never more than two at once (${most})`);
  t.same(poolWork(), { running: 0, waiting: 0 }, 'every turn given back');
});

t.test('media files wait for the same turns, and a refused upload can still finish', async (t) => {
  configurePoolWork({ concurrency: 1, queueMax: 0 });
  const media = new MediaFiles<{ name: string }>({ root: tempDir(t), maxBytes: 1 << 20, chunkBytes: 1024, chunkTimeoutMs: 60_000 });
  t.teardown(() => media.close());
  const up = media.begin('acme', 2048, { name: 'a.bin' });
  // A slow password check holds the one turn.
  const slow = await hashPassword('held', { N: 65536, r: 8, p: 1 });
  const held = verifyPassword('held', slow);
  const put = await refusal(media.put('acme', Buffer.alloc(10, 1)));
  t.ok(put instanceof AppError && put.statusCode === 503 && /storing a media file/.test(put.message), 'storing a file: 503');
  const chunk = await refusal(media.writeChunk('acme', up.uploadId, 0, Buffer.alloc(1024, 2)));
  t.ok(chunk instanceof AppError && chunk.statusCode === 503, 'writing a chunk: 503');
  t.equal(await held, true);
  await media.writeChunk('acme', up.uploadId, 0, Buffer.alloc(1024, 2));
  await media.writeChunk('acme', up.uploadId, 1, Buffer.alloc(1024, 3));
  const held2 = verifyPassword('held', slow);
  const finish = await refusal(media.finish('acme', up.uploadId));
  t.ok(finish instanceof AppError && finish.statusCode === 503, 'finishing: 503');
  await held2;
  const done = await media.finish('acme', up.uploadId);
  t.equal(done.file.sizeBytes, 2048, 'the refused upload finished once a turn was free');
  t.same(poolWork(), { running: 0, waiting: 0 });
});

t.test('an upload finished twice while both wait for a turn is stored once; the second answers 404', async (t) => {
  configurePoolWork({ concurrency: 1, queueMax: 2 });
  const media = new MediaFiles<{ name: string }>({ root: tempDir(t), maxBytes: 1 << 20, chunkBytes: 1024, chunkTimeoutMs: 60_000 });
  t.teardown(() => media.close());
  const up = media.begin('acme', 1024, { name: 'b.bin' });
  await media.writeChunk('acme', up.uploadId, 0, Buffer.alloc(1024, 4));
  const slow = await hashPassword('held', { N: 65536, r: 8, p: 1 });
  const held = verifyPassword('held', slow);
  const first = media.finish('acme', up.uploadId);
  const second = refusal(media.finish('acme', up.uploadId));
  t.same(poolWork(), { running: 1, waiting: 2 }, 'both finishes wait for the turn');
  await held;
  t.equal((await first).file.sizeBytes, 1024, 'the first one stores the file');
  const e = await second;
  t.ok(e instanceof AppError && e.statusCode === 404, `the second finds no upload left (${(e as Error)?.message})`);
  t.same(poolWork(), { running: 0, waiting: 0 });
});
