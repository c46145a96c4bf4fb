// Snapshots of the platform data (DESIGN: Cluster mode): the organisations and the `_` tenants' keys
// that every node's applier materialises from the stream's `x` subjects (commit-log.ts), so those
// subjects can be purged like a tenant's. Written and loaded as a tenant's snapshot is
// (snapshots.ts), under a scope no tenant has (`_g`, the platform's mark), from one consistent read
// of the platform (lmdb-platform-copy.ts). Any node may write one; its manifest is published
// expecting the last one's sequence, so of two nodes writing at once one wins.
//
// What the purge keeps. `x._g` and each tenant's `x` subject go below a floor: the mark of the
// platform snapshot before the one just written (the stream keeps one snapshot interval of platform
// history), and never past the position a node's applier keeps in the positions bucket
// (applier-positions.ts), so no applier is overtaken while its node writes its key; a node that was
// not running (restarted late, an empty DATA_DIR) or whose key expired loads the snapshot before its
// applier reads on (commit-log.ts loadPlatformPast). A tenant's `x` subject is purged no further
// than its own snapshot's mark as well: its tenant parts are read by the tenant's next takeover
// from there.
import type { JetStreamManager } from '@nats-io/jetstream';
import type { Logger } from '../log.js';
import type { LmdbStore } from '../store/lmdb-store.js';
import type { ClusterNames } from './names.js';
import { purgeBelow, TenantSnapshots, type SnapshotManifest, type SnapshotOptions } from './snapshots.js';

/** The snapshot scope of the platform data (no tenant is named so: tenants are never leased by `_` names). */
export const PLATFORM_SCOPE = '_g';

export interface PlatformSnapshot {
  manifest: SnapshotManifest;
  seq: number;
}

export class PlatformSnapshots {
  private readonly snaps: TenantSnapshots;
  private readonly jsm: JetStreamManager;
  private readonly names: ClusterNames;
  private readonly log: Logger;

  constructor(
    opts: SnapshotOptions,
    private readonly tenants: TenantSnapshots,
  ) {
    const local: LmdbStore = opts.local.platform;
    this.jsm = opts.jsm;
    this.names = opts.names;
    this.log = opts.logger;
    this.snaps = new TenantSnapshots({
      ...opts,
      copy: {
        export: () => local.exportPlatform(),
        clearSome: (_scope, max) => local.clearPlatformSome(max),
        putFrame: (_scope, frame, entries, format) => local.putPlatformFrame(frame, entries, format),
        putEntries: (_scope, entries) => local.putPlatformEntries(entries),
        finish: (_scope, mark) => local.finishPlatformImport(mark),
      },
    });
  }

  latest(): Promise<PlatformSnapshot | undefined> {
    return this.snaps.latest(PLATFORM_SCOPE);
  }

  /** Replaces this node's platform data with the snapshot's (before the applier reads on from its mark). */
  restore(manifest: SnapshotManifest): Promise<void> {
    return this.snaps.restore(PLATFORM_SCOPE, manifest);
  }

  /**
   * Writes a snapshot of the platform as this node holds it now; once it is the platform's, purges
   * the `x` subjects below the previous one's mark and below `limit()` (the lowest position an
   * applier keeps in the positions bucket). Resolves the new manifest (undefined when another
   * node's won, or `live` turned false).
   */
  async write(live: () => boolean, limit: () => Promise<number>): Promise<SnapshotManifest | undefined> {
    const before = await this.latest();
    const m = await this.snaps.write(PLATFORM_SCOPE, live);
    if (!m || !live()) return m;
    const floor = Math.min(before?.manifest.seq ?? 0, m.seq, await limit());
    if (floor > 1) await this.purge(floor, live);
    return m;
  }

  /** Purges `x._g` below `floor`, and each tenant's `x` subject below `floor` and its snapshot's mark. */
  private async purge(floor: number, live: () => boolean): Promise<void> {
    const { jsm, names } = this;
    await purgeBelow(jsm, names.stream, names.globalSubject, floor);
    const info = await jsm.streams.info(names.stream, { subjects_filter: `${names.log}.x.*` });
    for (const subject of Object.keys(info.state.subjects ?? {})) {
      if (!live()) return;
      const where = names.parseLogSubject(subject);
      if (!where || where.kind !== 'x') continue;
      const snap = await this.tenants.latest(where.tenant);
      if (!snap) continue;
      try {
        await purgeBelow(jsm, names.stream, subject, Math.min(floor, snap.manifest.seq));
      } catch (err) {
        this.log.warn({ err, subject }, 'cluster: purging a tenant\'s x subject failed; the next platform snapshot retries');
      }
    }
  }
}
