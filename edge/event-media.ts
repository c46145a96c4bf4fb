// The node's stored event media files and the chunked uploads in progress: a port
// (core/actor/services.ts, `eventMedia`) that edge/app.ts builds once per node from the
// configuration and the store the files are counted in. The routes that use it are
// routes/events/media.ts.
import type { Config } from '../core/config.js';
import type { Logger } from '../core/log.js';
import { MediaFiles } from '../core/media-files.js';
import type { Store } from '../core/store/store.js';
import { storageQuota } from './storage-quota.js';

export const FILE_KINDS = ['image', 'video', 'audio', 'document'] as const;

export type FileKind = (typeof FILE_KINDS)[number];

export interface UploadMeta {
  eventId: string;
  title: string | undefined;
  kind: FileKind | undefined;
  description: string | undefined;
  fileName: string;
  mimeType: string;
  by: string | null;
}

export interface MediaState {
  files: MediaFiles<UploadMeta>;
  /** Completed uploads: upload id → tenant and media record id, so a retried complete answers it again. */
  completed: Map<string, { tenant: string; mediaId: string; timer: NodeJS.Timeout }>;
}

declare module '../core/actor/services.js' {
  interface NodeServices {
    /** The node's stored event media files and the chunked uploads in progress (made on first use). */
    readonly eventMedia: EventMedia;
  }
}

/** One node's media files and uploads: a port (core/actor/services.ts), built by edge/app.ts. */
export class EventMedia {
  private state: MediaState | undefined;

  constructor(
    private readonly config: Config,
    private readonly store: Store,
    private readonly logger: Logger,
  ) {}

  /** The files and uploads, made on first use (a node without the events module never pays for them). */
  get(): MediaState {
    if (this.state) return this.state;
    const { config, store, logger } = this;
    const u = config.uploads;
    const quota = storageQuota(config);
    const s: MediaState = {
      files: new MediaFiles<UploadMeta>({
        root: u.dir ?? `${config.dataDir}/media`,
        maxBytes: u.maxBytes,
        chunkBytes: u.chunkBytes,
        chunkTimeoutMs: u.chunkTimeoutMs,
        store,
        limitsOf: (tenant) => quota?.limitsOf(tenant, store.getOrg(tenant)),
        minFreeDiskBytes: config.quotas.minFreeDiskBytes,
      }),
      completed: new Map(),
    };
    this.state = s;
    // Files stored before media was counted: counted once per tenant, off any request's path.
    void s.files.countAll().catch((err: unknown) => logger.warn({ err }, 'could not count stored media files'));
    return s;
  }

  /** Drops unfinished uploads and their temp files. */
  async close(): Promise<void> {
    const s = this.state;
    if (!s) return;
    this.state = undefined;
    for (const c of s.completed.values()) clearTimeout(c.timer);
    s.completed.clear();
    await s.files.close();
  }
}
