// Uploaded media files on disk (spec: Limits → upload chunks; issue 11). Files live under one
// root (default `<DATA_DIR>/media`) as `<root>/<tenant>/<id[0..2]>/<id>`, where the id is 128
// random bits generated here: a client's file name never becomes part of a path, it is only kept
// (sanitised) as metadata. A file is written to `<root>/.tmp`, synced, then renamed into place,
// so a crash leaves either the whole file or none of it.
//
// Chunked uploads: a session of `ceil(size / chunkBytes)` chunks written at their offsets into a
// temp file (chunks may come in any order, a repeated chunk overwrites itself), finished when
// every chunk is in. A session without a chunk for `chunkTimeoutMs` expires: its temp file is
// removed. Sessions live in this process's memory; a restart drops them (and their temp files).
//
// Storage quota (issue 29): a stored file's bytes are added to the tenant's media usage in the
// store before the file is moved into place (a file past the quota is refused, 413, and nothing is
// kept) and taken off when it is removed. A crash between the two leaves the usage counting a file
// that is not there, never the reverse. An upload counts against the quota from its start (the
// bytes it declared), so open uploads cannot add up past it; below the disk floor any upload is a
// 507. Files stored before media was counted are counted once per tenant, from its directory,
// before its first file is stored or removed (and in the background after a start).
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { mkdir, open, readdir, readFile, rename, rm, stat, statfs, type FileHandle } from 'node:fs/promises';
import { dirname, join, resolve, sep } from 'node:path';
import { AppError, appError } from './errors.js';
import { inPoolTurn } from './pool-work.js';
import { WriteBatch, type Store } from './store/store.js';
import type { StorageLimits } from './store/usage.js';

const TENANT = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;
const FILE_ID = /^[0-9a-f]{32}$/;
const TMP = '.tmp';
/** Unfinished uploads one tenant may hold at once. */
export const MAX_OPEN_UPLOADS_PER_TENANT = 32;

export interface MediaFilesOptions {
  /** Directory the files live under (created when missing). */
  root: string;
  /** Largest file, in bytes. */
  maxBytes: number;
  chunkBytes: number;
  chunkTimeoutMs: number;
  /** Where each tenant's media bytes are counted; without it nothing is counted or refused. */
  store?: Store;
  /** A tenant's quotas (undefined: none). */
  limitsOf?: (tenant: string) => StorageLimits | undefined;
  /** Free bytes the disk under `root` keeps: an upload that would go below answers 507 (0: none). */
  minFreeDiskBytes?: number;
}

export interface StoredFile {
  id: string;
  sizeBytes: number;
  /** Hex SHA-256 of the content. */
  sha256: string;
}

export interface UploadStatus {
  uploadId: string;
  sizeBytes: number;
  chunkBytes: number;
  totalChunks: number;
  chunksReceived: number;
  /** Indexes of the chunks still missing (at most the first 1,000). */
  missing: number[];
  complete: boolean;
  /** When the upload expires unless a chunk arrives first (ISO 8601). */
  expiresAt: string;
}

interface Session<M> {
  id: string;
  tenant: string;
  meta: M;
  sizeBytes: number;
  totalChunks: number;
  received: Uint8Array;
  receivedCount: number;
  file: string;
  fh: FileHandle | undefined;
  opening: Promise<FileHandle> | undefined;
  timer: NodeJS.Timeout;
  expiresAt: number;
  writes: number;
  closed: boolean;
}

/**
 * A display name safe to keep and to echo in a header: the last path segment only, NFC, no
 * control, format (bidi) or reserved characters, no leading dots, at most 200 characters.
 */
export function sanitizeFileName(name: string): string {
  let s = name.normalize('NFC');
  s = s.split(/[\\/]/).pop() ?? '';
  s = s.replace(/[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}<>:"|?*]/gu, '');
  s = s.replace(/\s+/gu, ' ').trim().replace(/^[.\s]+/u, '').replace(/[.\s]+$/u, '');
  const chars = [...s];
  if (chars.length > 200) s = chars.slice(0, 200).join('');
  return s || 'file';
}

export class MediaFiles<M = unknown> {
  readonly root: string;
  private readonly tmp: string;
  private readonly sessions = new Map<string, Session<M>>();
  private closed = false;
  /** Tenants whose files stored before media was counted are being counted now. */
  private readonly counting = new Map<string, Promise<void>>();

  constructor(private readonly opts: MediaFilesOptions) {
    this.root = resolve(opts.root);
    this.tmp = join(this.root, TMP);
    mkdirSync(this.tmp, { recursive: true });
    this.sweepStaleTemp();
  }

  /**
   * Removes temp files nobody has written to for twice the chunk time-out: unfinished uploads of a
   * process that died, which nobody can resume. Fresher ones are left alone, as another node
   * sharing this directory may still be writing them. Answers how many it removed.
   */
  sweepStaleTemp(now = Date.now()): number {
    const stale = now - 2 * this.opts.chunkTimeoutMs;
    let removed = 0;
    for (const name of readdirSync(this.tmp)) {
      const p = join(this.tmp, name);
      try {
        if (statSync(p).mtimeMs >= stale) continue;
        rmSync(p, { recursive: true, force: true });
        removed++;
      } catch {
        // Gone meanwhile (renamed into place, or removed by its upload).
      }
    }
    return removed;
  }

  get maxBytes(): number {
    return this.opts.maxBytes;
  }

  get chunkBytes(): number {
    return this.opts.chunkBytes;
  }

  /** The path of a stored file: always inside the root, or a throw. */
  pathOf(tenant: string, id: string): string {
    if (!TENANT.test(tenant) || !FILE_ID.test(id)) throw appError('ERR_NOT_FOUND', 'file');
    const p = resolve(this.root, tenant, id.slice(0, 2), id);
    if (!p.startsWith(this.root + sep)) throw appError('ERR_NOT_FOUND', 'file');
    return p;
  }

  private tmpFile(): string {
    return join(this.tmp, randomBytes(16).toString('hex'));
  }

  /** Moves a synced temp file into place under a new id. */
  private async commit(tenant: string, tmpFile: string): Promise<string> {
    const id = randomBytes(16).toString('hex');
    const dest = this.pathOf(tenant, id);
    await mkdir(dirname(dest), { recursive: true });
    await rename(tmpFile, dest);
    // The rename is durable only once its directory is; a file we cannot vouch for is not kept
    // (the caller has no record of it).
    try {
      const dir = await open(dirname(dest), 'r');
      try {
        await dir.sync();
      } finally {
        await dir.close();
      }
    } catch (err) {
      await rm(dest, { force: true });
      throw err;
    }
    return id;
  }

  /**
   * Counts the tenant's files stored before media was counted, once (the store keeps that it did).
   * Every change of the tenant's files waits for it, so none lands between the walk and its count.
   */
  counted(tenant: string): Promise<void> {
    const store = this.opts.store;
    if (!store || store.usage(tenant).mediaCounted) return Promise.resolve();
    let p = this.counting.get(tenant);
    if (!p) {
      p = (async () => {
        let bytes = 0;
        const dir = join(this.root, tenant);
        for (const shard of await readdir(dir).catch(() => [] as string[])) {
          for (const id of await readdir(join(dir, shard)).catch(() => [] as string[])) {
            if (!FILE_ID.test(id)) continue;
            const st = await stat(join(dir, shard, id)).catch(() => undefined);
            if (st?.isFile()) bytes += st.size;
          }
        }
        await store.commit(new WriteBatch().countedMediaBytes(tenant, bytes));
      })().finally(() => this.counting.delete(tenant));
      this.counting.set(tenant, p);
    }
    return p;
  }

  /**
   * Counts, one tenant at a time, the files of every tenant with a media directory whose files
   * were stored before media was counted (after a start, off any request's path).
   */
  async countAll(): Promise<void> {
    if (!this.opts.store) return;
    for (const e of await readdir(this.root, { withFileTypes: true }).catch(() => [])) {
      if (this.closed) return;
      if (e.isDirectory() && TENANT.test(e.name)) await this.counted(e.name);
    }
  }

  /** 507 when `bytes` more would take the disk below its floor. */
  private async assertRoom(bytes: number): Promise<void> {
    const min = this.opts.minFreeDiskBytes ?? 0;
    if (min <= 0) return;
    const s = await statfs(this.root);
    const free = Number(s.bavail) * Number(s.bsize);
    if (free - bytes < min) throw new AppError('ERR_INSUFFICIENT_STORAGE', [free, min]);
  }

  /**
   * 413 when `bytes` more (beside the tenant's open uploads, which count from their start) would
   * take the tenant past its media quota. The store checks again when the bytes are added.
   */
  private assertQuota(tenant: string, bytes: number): void {
    const limits = this.opts.limitsOf?.(tenant);
    if (!this.opts.store || limits?.mediaBytes == null) return;
    let used = this.opts.store.usage(tenant).mediaBytes;
    for (const s of this.sessions.values()) if (s.tenant === tenant) used += s.sizeBytes;
    if (used + bytes > limits.mediaBytes) {
      throw new AppError('ERR_STORAGE_QUOTA', [bytes, 'media bytes', used + bytes, limits.plan, limits.mediaBytes, used, limits.plan]);
    }
  }

  /** Adds (or takes off) a tenant's media bytes: growth past its quota fails here, 413. */
  private async addBytes(tenant: string, bytes: number): Promise<void> {
    if (this.opts.store && bytes !== 0) await this.opts.store.commit(new WriteBatch().addMediaBytes(tenant, bytes));
  }

  /** Moves a synced temp file of `size` bytes into place, counted in the tenant's media usage. */
  private async commitCounted(tenant: string, tmpFile: string, size: number): Promise<string> {
    await this.counted(tenant);
    // Counted first: a quota refusal keeps nothing, and a crash in between counts a missing file.
    await this.addBytes(tenant, size);
    try {
      return await this.commit(tenant, tmpFile);
    } catch (err) {
      await this.addBytes(tenant, -size).catch(() => undefined);
      throw err;
    }
  }

  /** Stores a whole file; answers its id. */
  async put(tenant: string, data: Buffer): Promise<StoredFile> {
    if (!TENANT.test(tenant)) throw appError('ERR_BAD_REQUEST', 'invalid tenant');
    if (data.length > this.opts.maxBytes) throw new AppError('ERR_UPLOAD_TOO_LARGE', [this.opts.maxBytes]);
    await this.counted(tenant);
    this.assertQuota(tenant, data.length);
    await this.assertRoom(data.length);
    const tmp = this.tmpFile();
    // Writing and syncing a large file holds a thread-pool thread the store's commits need: in turn.
    await inPoolTurn('storing a media file', async () => {
      const fh = await open(tmp, 'wx', 0o600);
      try {
        await fh.writeFile(data);
        await fh.sync();
      } catch (err) {
        await fh.close();
        await rm(tmp, { force: true });
        throw err;
      }
      await fh.close();
    });
    const id = await this.commitCounted(tenant, tmp, data.length).catch(async (err) => {
      await rm(tmp, { force: true });
      throw err;
    });
    return { id, sizeBytes: data.length, sha256: createHash('sha256').update(data).digest('hex') };
  }

  /** The content of a stored file, or undefined. */
  async read(tenant: string, id: string): Promise<Buffer | undefined> {
    try {
      return await readFile(this.pathOf(tenant, id));
    } catch (err) {
      if (err instanceof AppError || (err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
  }

  /** Removes a stored file and takes its bytes off the tenant's media usage. */
  async remove(tenant: string, id: string): Promise<void> {
    const path = this.pathOf(tenant, id);
    await this.counted(tenant);
    const st = await stat(path).catch(() => undefined);
    if (!st) return;
    await rm(path, { force: true });
    await this.addBytes(tenant, -st.size);
  }

  /** Every stored file, with when it was stored: for a sweep of files no record names. */
  async listStored(): Promise<Array<{ tenant: string; id: string; storedAt: number }>> {
    const out: Array<{ tenant: string; id: string; storedAt: number }> = [];
    const dirs = async (p: string) => (await readdir(p, { withFileTypes: true }).catch(() => [])).filter((e) => e.isDirectory()).map((e) => e.name);
    for (const tenant of await dirs(this.root)) {
      if (!TENANT.test(tenant)) continue;
      for (const shard of await dirs(join(this.root, tenant))) {
        for (const id of await readdir(join(this.root, tenant, shard)).catch(() => [] as string[])) {
          if (!FILE_ID.test(id) || !id.startsWith(shard)) continue;
          const st = await stat(this.pathOf(tenant, id)).catch(() => undefined);
          if (st?.isFile()) out.push({ tenant, id, storedAt: st.mtimeMs });
        }
      }
    }
    return out;
  }

  // --- chunked uploads ----------------------------------------------------------------------

  /**
   * Opens a chunked upload of `sizeBytes`; `meta` travels with it to `finish`. Its bytes count
   * against the tenant's media quota from now on (413 past it), and 507 below the disk floor.
   */
  async start(tenant: string, sizeBytes: number, meta: M, now = Date.now()): Promise<UploadStatus> {
    if (TENANT.test(tenant) && Number.isInteger(sizeBytes) && sizeBytes >= 1 && sizeBytes <= this.opts.maxBytes) {
      await this.counted(tenant);
      await this.assertRoom(sizeBytes);
    }
    return this.begin(tenant, sizeBytes, meta, now);
  }

  /** start() without waiting: for a tenant counted already, with no disk floor to read. */
  begin(tenant: string, sizeBytes: number, meta: M, now = Date.now()): UploadStatus {
    if (this.closed) throw appError('ERR_UNAVAILABLE', 'the server is shutting down');
    if (!TENANT.test(tenant)) throw appError('ERR_BAD_REQUEST', 'invalid tenant');
    if (!Number.isInteger(sizeBytes) || sizeBytes < 1) throw appError('ERR_VALIDATION', 'body/sizeBytes must be an integer of at least 1');
    if (sizeBytes > this.opts.maxBytes) throw new AppError('ERR_UPLOAD_TOO_LARGE', [this.opts.maxBytes]);
    let open = 0;
    for (const s of this.sessions.values()) if (s.tenant === tenant) open++;
    if (open >= MAX_OPEN_UPLOADS_PER_TENANT) {
      throw appError('ERR_CONFLICT', `this organisation has ${open} unfinished uploads; finish or abort one first`);
    }
    this.assertQuota(tenant, sizeBytes);
    const id = randomBytes(16).toString('hex');
    const totalChunks = Math.ceil(sizeBytes / this.opts.chunkBytes);
    const s: Session<M> = {
      id,
      tenant,
      meta,
      sizeBytes,
      totalChunks,
      received: new Uint8Array(totalChunks),
      receivedCount: 0,
      file: this.tmpFile(),
      fh: undefined,
      opening: undefined,
      timer: setTimeout(() => void this.expire(s), this.opts.chunkTimeoutMs),
      expiresAt: now + this.opts.chunkTimeoutMs,
      writes: 0,
      closed: false,
    };
    s.timer.unref();
    this.sessions.set(id, s);
    return this.status(s);
  }

  private session(tenant: string, uploadId: string): Session<M> {
    const s = this.sessions.get(uploadId);
    // Another tenant's upload id is as unknown as a made-up one.
    if (!s || s.tenant !== tenant || s.closed) {
      throw appError('ERR_NOT_FOUND', `upload ${uploadId.slice(0, 64)} (unfinished uploads expire ${this.opts.chunkTimeoutMs / 1000} s after their last chunk)`);
    }
    return s;
  }

  private status(s: Session<M>): UploadStatus {
    const missing: number[] = [];
    for (let i = 0; i < s.totalChunks && missing.length < 1000; i++) if (!s.received[i]) missing.push(i);
    return {
      uploadId: s.id,
      sizeBytes: s.sizeBytes,
      chunkBytes: this.opts.chunkBytes,
      totalChunks: s.totalChunks,
      chunksReceived: s.receivedCount,
      missing,
      complete: s.receivedCount === s.totalChunks,
      expiresAt: new Date(s.expiresAt).toISOString(),
    };
  }

  /** The state of an upload, with its metadata; 404 when unknown, expired or another tenant's. */
  get(tenant: string, uploadId: string): UploadStatus & { meta: M } {
    const s = this.session(tenant, uploadId);
    return { ...this.status(s), meta: s.meta };
  }

  private touch(s: Session<M>, now: number): void {
    s.expiresAt = now + this.opts.chunkTimeoutMs;
    s.timer.refresh();
  }

  /**
   * Writes chunk `index`. Every chunk is `chunkBytes` long except the last, which holds the rest;
   * anything else is a 400. Sending a chunk again overwrites it (a retry is harmless).
   */
  async writeChunk(tenant: string, uploadId: string, index: number, data: Buffer, now = Date.now()): Promise<UploadStatus> {
    const s = this.session(tenant, uploadId);
    if (!Number.isInteger(index) || index < 0 || index >= s.totalChunks) {
      throw appError('ERR_VALIDATION', `params/index must be an integer from 0 to ${s.totalChunks - 1}`);
    }
    const expected = index === s.totalChunks - 1 ? s.sizeBytes - index * this.opts.chunkBytes : this.opts.chunkBytes;
    if (data.length > this.opts.chunkBytes) throw new AppError('ERR_PAYLOAD_TOO_LARGE', [this.opts.chunkBytes]);
    if (data.length !== expected) throw appError('ERR_VALIDATION', `chunk ${index} must be ${expected} bytes, not ${data.length}`);
    this.touch(s, now);
    s.writes++;
    try {
      // A failed open (EMFILE, ENOSPC) is not remembered: the next chunk tries again.
      s.opening ??= open(s.file, 'w+', 0o600).then(
        (fh) => (s.fh = fh),
        (err: unknown) => {
          s.opening = undefined;
          throw err;
        },
      );
      const fh = await s.opening;
      if (s.closed) throw appError('ERR_NOT_FOUND', `upload ${uploadId}`);
      await inPoolTurn('writing an upload chunk', () => fh.write(data, 0, data.length, index * this.opts.chunkBytes));
    } finally {
      s.writes--;
    }
    if (s.closed) throw appError('ERR_NOT_FOUND', `upload ${uploadId}`);
    if (!s.received[index]) {
      s.received[index] = 1;
      s.receivedCount++;
    }
    return this.status(s);
  }

  /**
   * Ends a complete upload: the temp file is synced and moved into place. 409 while chunks are
   * missing or still being written. Answers the stored file and the upload's metadata.
   */
  async finish(tenant: string, uploadId: string): Promise<{ file: StoredFile; meta: M }> {
    this.complete(tenant, uploadId);
    // The turn is taken before the session is let go: an upload refused a turn (503) can finish
    // later. While it waited, the upload may have been finished, aborted or written to again: asked anew.
    return inPoolTurn('finishing an upload', async () => {
      const s = this.complete(tenant, uploadId);
      this.detach(s);
      // The session is gone from here on: any failure must not leave its temp file behind.
      try {
        const fh = s.fh!;
        try {
          await fh.sync();
        } finally {
          await fh.close();
        }
        const sha256 = await hashFile(s.file);
        await this.assertRoom(0);
        const id = await this.commitCounted(tenant, s.file, s.sizeBytes);
        return { file: { id, sizeBytes: s.sizeBytes, sha256 }, meta: s.meta };
      } catch (err) {
        await rm(s.file, { force: true });
        throw err;
      }
    });
  }

  /** The session of an upload whose every chunk is in and none is being written: else 404 or 409. */
  private complete(tenant: string, uploadId: string): Session<M> {
    const s = this.session(tenant, uploadId);
    if (s.receivedCount !== s.totalChunks || s.writes > 0) {
      const st = this.status(s);
      throw appError('ERR_CONFLICT', `upload ${uploadId} is missing ${s.totalChunks - s.receivedCount} of ${s.totalChunks} chunks${st.missing.length ? ` (first: ${st.missing[0]})` : ''}`);
    }
    return s;
  }

  /** Abandons an upload and removes its temp data. */
  async abort(tenant: string, uploadId: string): Promise<void> {
    await this.drop(this.session(tenant, uploadId));
  }

  /** Unfinished uploads (all tenants). */
  get openUploads(): number {
    return this.sessions.size;
  }

  private detach(s: Session<M>): void {
    s.closed = true;
    clearTimeout(s.timer);
    this.sessions.delete(s.id);
  }

  private async drop(s: Session<M>): Promise<void> {
    this.detach(s);
    try {
      const fh = s.fh ?? (s.opening ? await s.opening.catch(() => undefined) : undefined);
      await fh?.close();
    } finally {
      await rm(s.file, { force: true });
    }
  }

  private async expire(s: Session<M>): Promise<void> {
    if (s.closed) return;
    // A chunk being written now counts as activity: look again after it.
    if (s.writes > 0) return void s.timer.refresh();
    await this.drop(s).catch(() => undefined);
  }

  /** Drops every unfinished upload (shutdown). */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.sessions.values()].map((s) => this.drop(s).catch(() => undefined)));
  }
}

function hashFile(file: string): Promise<string> {
  return new Promise((resolvePromise, reject) => {
    const h = createHash('sha256');
    createReadStream(file)
      .on('data', (c) => h.update(c))
      .on('error', reject)
      .on('end', () => resolvePromise(h.digest('hex')));
  });
}
