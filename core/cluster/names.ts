// Names of everything cluster mode keeps on NATS, derived from one prefix so several deployments
// can share a server. Tenants become subject tokens: an organisation id (`[A-Za-z0-9][A-Za-z0-9_-]*`)
// is used as it is; anything else (system tenants such as `_global`) is `=` + base64url, which
// never collides with an organisation id and is a valid NATS token and KV key.

/** Tenants whose name starts with `_` are the platform's own (organisation ids never do). */
export function isSystemTenant(tenant: string): boolean {
  return tenant.charCodeAt(0) === 95; // '_'
}

const PLAIN = /^[A-Za-z0-9][A-Za-z0-9_-]*$/;

export function tenantToken(tenant: string): string {
  return PLAIN.test(tenant) ? tenant : '=' + Buffer.from(tenant, 'utf8').toString('base64url');
}

export function tokenTenant(token: string): string {
  return token.charCodeAt(0) === 61 ? Buffer.from(token.slice(1), 'base64url').toString('utf8') : token;
}

const NODE_ID = /^[A-Za-z0-9_-]{1,64}$/;

export class ClusterNames {
  /** JetStream stream holding every committed batch. */
  readonly stream: string;
  /** KV bucket of tenant leases. */
  readonly leaseBucket: string;
  /** Subject prefix of the stream: `<log>.t.<tenant>`, `<log>.x.<tenant>`, `<log>.x._g`. */
  readonly log: string;
  /** Heartbeats of live nodes. */
  readonly heartbeat: string;
  /** KV bucket where each node's applier keeps how far it read the platform subjects (applier-positions.ts). */
  readonly positionBucket: string;
  /** JetStream stream holding each tenant's latest snapshot (snapshots.ts). */
  readonly snapshotStream: string;
  /** Subject prefix of the snapshot stream: `<snap>.c.<tenant>` chunks, `<snap>.m.<tenant>` manifests. */
  readonly snap: string;
  private readonly node: string;

  constructor(prefix: string) {
    if (!/^[A-Za-z0-9_-]{1,32}$/.test(prefix)) throw new Error(`cluster prefix must be 1-32 of [A-Za-z0-9_-], got ${JSON.stringify(prefix)}`);
    this.stream = `${prefix.toUpperCase().replace(/-/g, '_')}_COMMITS`;
    this.leaseBucket = `${prefix}-leases`;
    this.log = `${prefix}.log`;
    this.heartbeat = `${prefix}.hb`;
    this.positionBucket = `${prefix}-positions`;
    this.snapshotStream = `${prefix.toUpperCase().replace(/-/g, '_')}_SNAPSHOTS`;
    this.snap = `${prefix}.snap`;
    this.node = `${prefix}.node.`;
  }

  static assertNodeId(id: string): void {
    if (!NODE_ID.test(id)) throw new Error(`NODE_ID must be 1-64 of [A-Za-z0-9_-] in cluster mode, got ${JSON.stringify(id)}`);
  }

  /** A tenant's own batches. */
  tenantSubject(tenant: string): string {
    return `${this.log}.t.${tenantToken(tenant)}`;
  }

  /** Batches of one tenant that also write platform-wide data (organisations, `_` tenants). */
  mixedSubject(tenant: string): string {
    return `${this.log}.x.${tenantToken(tenant)}`;
  }

  /**
   * Batches of platform-wide data only, or of several tenants at once. Under `x` with the mixed
   * batches, so one filter (platformFilter) reads every batch that writes platform data, in order;
   * `_g` is no tenant's token (those start with a letter, a digit or `=`).
   */
  get globalSubject(): string {
    return `${this.log}.x._g`;
  }

  /** Every batch that writes platform data (`g` and `x`): what every node applies. */
  get platformFilter(): string {
    return `${this.log}.x.>`;
  }

  /** Both subjects of a tenant (what a takeover replays). */
  tenantFilter(tenant: string): string {
    return `${this.log}.*.${tenantToken(tenant)}`;
  }

  /** The chunks of a tenant's snapshots, oldest first. */
  snapshotChunks(tenant: string): string {
    return `${this.snap}.c.${tenantToken(tenant)}`;
  }

  /** A tenant's snapshot manifests: the last one names the complete snapshot. */
  snapshotManifest(tenant: string): string {
    return `${this.snap}.m.${tenantToken(tenant)}`;
  }

  leaseKey(tenant: string): string {
    return `t.${tenantToken(tenant)}`;
  }

  /** Request subjects of one node: `http`, `ask`, `commit`. */
  nodeSubject(nodeId: string, what: 'http' | 'ask' | 'commit'): string {
    return `${this.node}${nodeId}.${what}`;
  }

  /** What a stream subject says: kind and tenant (`g` has none). */
  parseLogSubject(subject: string): { kind: 't' | 'x' | 'g'; tenant: string } | undefined {
    if (!subject.startsWith(this.log)) return undefined;
    const rest = subject.slice(this.log.length + 1);
    if (rest === 'x._g') return { kind: 'g', tenant: '' };
    const kind = rest.charAt(0);
    if ((kind !== 't' && kind !== 'x') || rest.charAt(1) !== '.') return undefined;
    return { kind, tenant: tokenTenant(rest.slice(2)) };
  }
}
