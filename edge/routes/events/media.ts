// Event media files (spec: Endpoints → Events `/events/:id/media`; Limits → upload chunks, 64 KB,
// 120 s time-out; Errors → 413). Three ways in, one record out:
//
//   POST /events/:id/media                 JSON: a media record pointing at a URL (as before), or
//                                          multipart/form-data: one `file` part (+ title, kind,
//                                          description) stored here, up to uploads.maxBytes
//   POST /events/:id/media/uploads         a chunked upload for large files: declare the size,
//   PUT  .../uploads/:uploadId/chunks/:i   send chunks of uploads.chunkBytes (the last one holds the
//   POST .../uploads/:uploadId/complete    rest) in any order, then complete; an upload without a
//                                          chunk for uploads.chunkTimeoutMs expires
//   GET  /events/:id/media/files/:fileId   the stored bytes, with the type they were uploaded as
//
// A stored file is addressed by its own server-generated id, so its link (`data.url`) is known when
// the media record is written and the record is one write. The client's file name is kept only as
// sanitised metadata (core/media-files.ts).
import { Type, type Static } from '@sinclair/typebox';
import { AppError, appError } from '../../../core/errors.js';
import { sanitizeFileName, type StoredFile } from '../../../core/media-files.js';
import type { StoredRecord } from '../../../core/store/record.js';
import { EVENT_MEDIA } from '../../../actors/event-records/index.js';
import type { AppDeps } from '../../deps.js';
import { parseMultipart } from '../../multipart.js';
import { FILE_KINDS, type FileKind, type MediaState, type UploadMeta } from '../../event-media.js';
import { route, type RequestContext, type RouteDef } from '../../route.js';
import { EventRef, RecordSchema } from './schemas.js';
import { EventsApi } from '../../../actors/events/index.js';

const TAG = 'Events';
const MULTIPART = 'multipart/form-data';
const JSON_TYPE = 'application/json';
const OCTETS = 'application/octet-stream';
/** Room for the multipart framing and text fields around a file of the size cap. */
const MULTIPART_OVERHEAD = 64 * 1024;
const MIME = /^[a-z0-9][a-z0-9!#$&^_.+-]{0,126}\/[a-z0-9][a-z0-9!#$&^_.+-]{0,126}$/;
/** Types a browser may show inline; anything else (HTML, SVG, scripts) is sent as an attachment. */
const INLINE = /^(image\/(png|jpeg|gif|webp|avif|bmp)|video\/(mp4|webm|ogg|quicktime)|audio\/(mpeg|mp4|ogg|wav|webm|aac|flac)|application\/pdf|text\/plain)$/;

function stateOf(deps: AppDeps): MediaState {
  return deps.services.eventMedia.get();
}

/** Drops unfinished uploads and their temp files (module stop). */
export function closeMedia(deps: AppDeps): Promise<void> {
  return deps.services.eventMedia.close();
}

export function mimeOf(raw: string | undefined): string {
  const m = (raw ?? '').split(';')[0].trim().toLowerCase();
  return MIME.test(m) ? m : OCTETS;
}

function kindOf(mime: string): FileKind {
  const top = mime.split('/')[0];
  return top === 'image' || top === 'video' || top === 'audio' ? top : 'document';
}

/**
 * `attachment; filename="ascii"; filename*=UTF-8''utf8` (RFC 6266), from a sanitised name. RFC 5987
 * attr-chars exclude ' ( ) which encodeURIComponent leaves as they are.
 */
function disposition(inline: boolean, name: string): string {
  const ascii = name.replace(/[^\x20-\x7e]/g, '_').replace(/["\\]/g, '_');
  return `${inline ? 'inline' : 'attachment'}; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(name).replace(/['()]/g, (c) => '%' + c.charCodeAt(0).toString(16).toUpperCase())}`;
}

const fileUrl = (eventId: string, fileId: string) => `/events/${eventId}/media/files/${fileId}`;

function fileRecordData(meta: UploadMeta, file: StoredFile): Record<string, unknown> {
  const data: Record<string, unknown> = {
    title: meta.title ?? meta.fileName,
    kind: meta.kind ?? kindOf(meta.mimeType),
    url: fileUrl(meta.eventId, file.id),
    mimeType: meta.mimeType,
    sizeBytes: file.sizeBytes,
    file: { id: file.id, name: meta.fileName, sha256: file.sha256 },
    uploadedBy: meta.by,
  };
  if (meta.description !== undefined) data.description = meta.description;
  return data;
}

/** Checks the text fields of a file upload (multipart fields or the chunked-upload body). */
function fileFields(f: Record<string, unknown>, at: string): Pick<UploadMeta, 'title' | 'kind' | 'description'> {
  const str = (k: string, max: number, min = 0): string | undefined => {
    const v = f[k];
    if (v === undefined) return undefined;
    if (typeof v !== 'string' || [...v].length > max || [...v].length < min) throw appError('ERR_VALIDATION', `${at}/${k} must be a string of ${min} to ${max} characters`);
    return v;
  };
  const kind = f.kind;
  if (kind !== undefined && !FILE_KINDS.includes(kind as FileKind)) throw appError('ERR_VALIDATION', `${at}/kind must be one of: ${FILE_KINDS.join(', ')}`);
  return { title: str('title', 200, 1), kind: kind as FileKind | undefined, description: str('description', 2000) };
}

/**
 * Removes the stored files of media records that were just deleted (the delete has committed, so
 * no record points at them any more). Best effort: a file that cannot be removed costs disk, not
 * correctness, and is logged.
 */
export async function removeStoredFiles(deps: AppDeps, tenant: string, records: readonly StoredRecord[]): Promise<void> {
  const files = stateOf(deps).files;
  // A record written through the record store may name the same file: that one keeps it.
  const stillNamed = new EventsApi(deps).mediaFileIds(tenant);
  for (const r of records) {
    const id = (r.data.file as { id?: unknown } | undefined)?.id;
    if (typeof id !== 'string' || stillNamed.has(id)) continue;
    await files.remove(tenant, id).catch((err: unknown) => deps.logger.warn({ err, tenant, fileId: id }, 'could not remove a deleted media file'));
  }
}

/** A stored file is an orphan once no media record has named it for this long (see sweepOrphanFiles). */
export const ORPHAN_AGE_MS = 60 * 60 * 1000;

/**
 * Removes stored files that no media record names and that are older than `olderThanMs` (and
 * temp files of uploads nobody finished, see MediaFiles.sweepStaleTemp): the file
 * of an upload whose record was never written (the process died between the two), or whose record
 * was deleted through the record store. The age keeps an upload finishing now (file stored, record
 * not yet written) and, in a cluster sharing the directory, a record still on its way to this
 * node, out of reach. Answers how many files it removed.
 */
export async function sweepOrphanFiles(deps: AppDeps, olderThanMs = ORPHAN_AGE_MS): Promise<number> {
  const files = stateOf(deps).files;
  const events = new EventsApi(deps);
  // Wall-clock time, as the file times are.
  const cutoff = Date.now() - olderThanMs;
  const named = new Map<string, Set<string>>();
  let removed = 0;
  for (const f of await files.listStored()) {
    if (f.storedAt > cutoff) continue;
    let ids = named.get(f.tenant);
    if (!ids) named.set(f.tenant, (ids = events.mediaFileIds(f.tenant)));
    if (ids.has(f.id)) continue;
    await files.remove(f.tenant, f.id).then(
      () => removed++,
      (err: unknown) => deps.logger.warn({ err, tenant: f.tenant, fileId: f.id }, 'could not remove an orphaned media file'),
    );
  }
  removed += files.sweepStaleTemp();
  if (removed > 0) deps.logger.info({ removed }, 'removed media files no record names, and stale temp files');
  return removed;
}

/** Creates the media record of a stored file; removes the file again when that fails. */
async function recordFile(svc: EventsApi<AppDeps>, st: MediaState, tenant: string, meta: UploadMeta, file: StoredFile): Promise<StoredRecord> {
  try {
    return await svc.events<StoredRecord>(tenant, { type: 'create-child', datatype: EVENT_MEDIA, eventId: meta.eventId, data: fileRecordData(meta, file), state: 'active' });
  } catch (err) {
    await st.files.remove(tenant, file.id).catch(() => undefined);
    throw err;
  }
}

const UploadParams = Type.Object({ id: EventRef, uploadId: Type.String({ pattern: '^[0-9a-f]{32}$', description: 'Upload id' }) });
const ChunkParams = Type.Object({
  id: EventRef,
  uploadId: Type.String({ pattern: '^[0-9a-f]{32}$' }),
  index: Type.Integer({ minimum: 0, description: '0-based chunk number' }),
});
const FileParams = Type.Object({ id: EventRef, fileId: Type.String({ pattern: '^[0-9a-f]{32}$', description: 'Stored file id (from the media record `data.file.id`)' }) });

const UploadStatus = Type.Object({
  uploadId: Type.String(),
  sizeBytes: Type.Integer(),
  chunkBytes: Type.Integer({ description: 'Every chunk but the last has exactly this size' }),
  totalChunks: Type.Integer(),
  chunksReceived: Type.Integer(),
  missing: Type.Array(Type.Integer(), { description: 'Chunks not received yet (the first 1,000)' }),
  complete: Type.Boolean({ description: 'Every chunk is in: call complete' }),
  expiresAt: Type.String({ format: 'date-time', description: 'The upload expires then unless a chunk arrives first' }),
});

const UploadBegin = Type.Object(
  {
    fileName: Type.String({ minLength: 1, maxLength: 1000, description: 'Kept (sanitised) as metadata; never used as a path' }),
    sizeBytes: Type.Integer({ minimum: 1, description: 'Exact size of the file; above uploads.maxBytes the answer is 413' }),
    mimeType: Type.Optional(Type.String({ maxLength: 255 })),
    title: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Defaults to the file name' })),
    kind: Type.Optional(Type.Union(FILE_KINDS.map((k) => Type.Literal(k)), { description: 'Defaults from the MIME type' })),
    description: Type.Optional(Type.String({ maxLength: 2000 })),
  },
  { additionalProperties: false },
);

/**
 * The routes. `jsonCreate` is the JSON media record schema of events.ts: a JSON body is checked
 * against it by the edge; a multipart body (which the edge does not parse) is checked here.
 */
export function mediaRoutes(svc: EventsApi<AppDeps>, jsonCreate: ReturnType<typeof Type.Object>): RouteDef[] {
  const deps = svc.deps;
  const st = stateOf(deps);
  const { maxBytes, chunkBytes, chunkTimeoutMs } = deps.config.uploads;
  const jsonCap = deps.config.http.maxBodyBytes;
  // The edge validates JSON object bodies against the record schema; other bodies (multipart, which
  // it leaves unparsed) pass through to the handler.
  const CreateBody = Type.Unsafe<Static<typeof jsonCreate> | undefined>({
    if: { type: 'object' },
    then: jsonCreate,
    description:
      `\`${JSON_TYPE}\`: a media record pointing at \`url\` (the object schema). \`${MULTIPART}\`: one file part named \`file\` ` +
      `(at most ${maxBytes} bytes) and optional text fields \`title\` (default: the file name), \`kind\` (${FILE_KINDS.join(', ')}; ` +
      'default from the part’s Content-Type) and `description`.',
  });

  const createFromForm = async (ctx: RequestContext, eventId: string): Promise<StoredRecord> => {
    const form = parseMultipart(ctx.rawBody ?? Buffer.alloc(0), ctx.headers['content-type'] ?? '');
    for (const k of Object.keys(form.fields)) {
      if (k !== 'title' && k !== 'kind' && k !== 'description') throw appError('ERR_VALIDATION', `body/${k.slice(0, 64)} is not allowed`);
    }
    const file = form.files[0];
    if (!file || file.field !== 'file') throw appError('ERR_VALIDATION', 'body/file is required: one part with a filename, named "file"');
    if (file.data.length > maxBytes) throw new AppError('ERR_UPLOAD_TOO_LARGE', [maxBytes]);
    if (file.data.length === 0) throw appError('ERR_VALIDATION', 'body/file is empty');
    const meta: UploadMeta = {
      eventId,
      ...fileFields(form.fields, 'body'),
      fileName: sanitizeFileName(file.filename),
      mimeType: mimeOf(file.contentType),
      by: ctx.principal?.sub ?? null,
    };
    const stored = await st.files.put(ctx.tenant, file.data);
    return recordFile(svc, st, ctx.tenant, meta, stored);
  };

  /** The event and an upload of it (404 for another event's or another tenant's upload). */
  const uploadOf = (ctx: RequestContext<{ id: string; uploadId: string }>) => {
    const ev = svc.event(ctx.tenant, ctx.params.id);
    const u = st.files.get(ctx.tenant, ctx.params.uploadId);
    if (u.meta.eventId !== ev.sk) throw appError('ERR_NOT_FOUND', `upload ${ctx.params.uploadId}`);
    return u;
  };

  return [
    route({
      method: 'POST',
      path: '/events/:id/media',
      auth: 'staff',
      tag: TAG,
      summary: 'Add a media record or upload a media file to an event',
      description:
        `A JSON body adds a media record pointing at its \`url\`. A \`${MULTIPART}\` body uploads one file (part \`file\`, at most ` +
        `${maxBytes} bytes; larger is a 413) which is stored by the service: the record gets \`data.url\` ` +
        '`/events/:id/media/files/:fileId`, `data.file {id, name, sha256}`, `mimeType` and `sizeBytes`. The file name is kept ' +
        'as sanitised metadata only. Larger files: use the chunked upload (`POST /events/:id/media/uploads`). A file that would take ' +
        'the organisation past its media quota answers 413 `ERR_STORAGE_QUOTA` (naming the quota and the usage; see ' +
        '`GET /profile/org/usage`), and 507 when the server is low on disk; either way nothing is kept.',
      params: Type.Object({ id: EventRef }),
      body: CreateBody,
      consumes: [JSON_TYPE, MULTIPART],
      // The edge stops reading past this while the body streams in; the exact file cap is checked
      // once the part is parsed. Never below the global cap, which JSON bodies keep.
      maxBodyBytes: Math.max(jsonCap, maxBytes + MULTIPART_OVERHEAD),
      response: RecordSchema,
      status: 201,
      errors: [404, 413, 415, 507],
      handler: async (ctx) => {
        const type = (ctx.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
        if (type === MULTIPART) return createFromForm(ctx, svc.event(ctx.tenant, ctx.params.id).sk);
        // JSON bodies keep the global cap; only multipart may use the larger upload cap.
        if (ctx.rawBody && ctx.rawBody.length > jsonCap) throw new AppError('ERR_PAYLOAD_TOO_LARGE', [jsonCap]);
        const body = ctx.body;
        if (typeof body !== 'object' || body === null || Array.isArray(body)) throw appError('ERR_VALIDATION', 'body must be object');
        const ev = svc.event(ctx.tenant, ctx.params.id);
        return svc.events(ctx.tenant, { type: 'create-child', datatype: EVENT_MEDIA, eventId: ev.sk, data: { ...body }, state: 'active' });
      },
    }),

    route({
      method: 'GET',
      path: '/events/:id/media/files/:fileId',
      auth: 'staff',
      tag: TAG,
      summary: 'Download a stored media file',
      description:
        'The bytes of a file uploaded to this event, with the Content-Type it was uploaded as. Images, audio, video, PDF and ' +
        'plain text are sent `inline`, anything else as an `attachment`; every file is sandboxed by its Content-Security-Policy. ' +
        'The ETag is the SHA-256 of the content (If-None-Match answers 304). A file whose media record is gone is a 404.',
      params: FileParams,
      errors: [404],
      handler: async (ctx) => {
        const ev = svc.event(ctx.tenant, ctx.params.id);
        const rec = svc.mediaOfFile(ctx.tenant, ev.sk, ctx.params.fileId);
        if (!rec) throw appError('ERR_NOT_FOUND', `file ${ctx.params.fileId}`);
        const file = rec.data.file as { id: string; name: string; sha256: string };
        const mime = mimeOf(rec.data.mimeType as string);
        const etag = `"${file.sha256}"`;
        ctx.responseHeaders['etag'] = etag;
        ctx.responseHeaders['cache-control'] = 'private, max-age=3600';
        ctx.responseHeaders['content-security-policy'] = "default-src 'none'; sandbox";
        ctx.responseHeaders['content-disposition'] = disposition(INLINE.test(mime), file.name);
        ctx.type = mime;
        if (ctx.headers['if-none-match'] === etag) {
          ctx.status = 304;
          return '';
        }
        const data = await st.files.read(ctx.tenant, file.id);
        if (!data) throw appError('ERR_NOT_FOUND', `file ${ctx.params.fileId}`);
        return data;
      },
    }),

    route({
      method: 'POST',
      path: '/events/:id/media/uploads',
      auth: 'staff',
      tag: TAG,
      summary: 'Start a chunked media upload',
      description:
        `For files too large for one request. Declare \`sizeBytes\` (at most ${maxBytes}; larger is a 413) and the file's metadata; ` +
        `then PUT chunks of exactly \`chunkBytes\` (${chunkBytes}) bytes, the last one holding the rest, as ` +
        '`application/octet-stream` to `/events/:id/media/uploads/:uploadId/chunks/:index`, in any order (a repeated chunk ' +
        'overwrites itself), and POST `.../complete`. An upload with no chunk for ' +
        `${chunkTimeoutMs / 1000} s expires and its data is removed (spec: Limits → upload chunks). An open upload counts against the ` +
        'organisation’s media quota from its start: one that would pass it answers 413 `ERR_STORAGE_QUOTA`, and 507 when the ' +
        'server is low on disk.',
      params: Type.Object({ id: EventRef }),
      body: UploadBegin,
      response: UploadStatus,
      status: 201,
      errors: [404, 409, 413, 507],
      handler: (ctx) => {
        const ev = svc.event(ctx.tenant, ctx.params.id);
        const b = ctx.body;
        const meta: UploadMeta = {
          eventId: ev.sk,
          ...fileFields(b as Record<string, unknown>, 'body'),
          fileName: sanitizeFileName(b.fileName),
          mimeType: mimeOf(b.mimeType),
          by: ctx.principal?.sub ?? null,
        };
        return st.files.start(ctx.tenant, b.sizeBytes, meta, deps.clock.now());
      },
    }),

    route({
      method: 'GET',
      path: '/events/:id/media/uploads/:uploadId',
      auth: 'staff',
      tag: TAG,
      summary: 'State of a chunked upload',
      description: 'Which chunks are in and which are missing (to resume after a broken connection), and when it expires.',
      params: UploadParams,
      response: UploadStatus,
      errors: [404],
      handler: (ctx) => {
        const { meta: _meta, ...status } = uploadOf(ctx);
        return status;
      },
    }),

    route({
      method: 'PUT',
      path: '/events/:id/media/uploads/:uploadId/chunks/:index',
      auth: 'staff',
      tag: TAG,
      summary: 'Send one chunk of a chunked upload',
      description:
        `The raw bytes (\`${OCTETS}\`) of chunk \`index\`: exactly ${chunkBytes} bytes, the last chunk the rest. A larger body is a ` +
        '413, another size a 400. Each chunk restarts the upload’s time-out.',
      params: ChunkParams,
      consumes: [OCTETS],
      maxBodyBytes: chunkBytes,
      response: UploadStatus,
      errors: [404, 413, 415],
      handler: (ctx) => {
        uploadOf(ctx);
        return st.files.writeChunk(ctx.tenant, ctx.params.uploadId, ctx.params.index, ctx.rawBody ?? Buffer.alloc(0), deps.clock.now());
      },
    }),

    route({
      method: 'POST',
      path: '/events/:id/media/uploads/:uploadId/complete',
      auth: 'staff',
      tag: TAG,
      summary: 'Finish a chunked upload',
      description:
        'Stores the file and answers its media record (as the multipart upload does). 409 while chunks are missing. Calling ' +
        'it again for the same upload answers the same record. 413 when the organisation’s media quota was used up meanwhile ' +
        '(the upload is dropped), 507 when the server is low on disk.',
      params: UploadParams,
      response: RecordSchema,
      status: 201,
      errors: [404, 409, 413, 507],
      handler: (ctx) =>
        svc.serialize(ctx.tenant, `media-upload:${ctx.params.uploadId}`, async () => {
          const done = st.completed.get(ctx.params.uploadId);
          if (done && done.tenant === ctx.tenant) {
            const rec = svc.mediaRecord(ctx.tenant, done.mediaId);
            if (rec && rec.data.event === svc.event(ctx.tenant, ctx.params.id).sk) return rec;
          }
          uploadOf(ctx);
          const { file, meta } = await st.files.finish(ctx.tenant, ctx.params.uploadId);
          const rec = await recordFile(svc, st, ctx.tenant, meta, file);
          const timer = setTimeout(() => st.completed.delete(ctx.params.uploadId), chunkTimeoutMs);
          timer.unref();
          st.completed.set(ctx.params.uploadId, { tenant: ctx.tenant, mediaId: rec.sk, timer });
          return rec;
        }),
    }),

    route({
      method: 'DELETE',
      path: '/events/:id/media/uploads/:uploadId',
      auth: 'staff',
      tag: TAG,
      summary: 'Abandon a chunked upload',
      description: 'Removes the upload and the chunks received so far.',
      params: UploadParams,
      status: 204,
      errors: [404],
      handler: async (ctx) => {
        uploadOf(ctx);
        await st.files.abort(ctx.tenant, ctx.params.uploadId);
      },
    }),
  ];
}
