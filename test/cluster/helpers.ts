// A test cluster: a real nats-server (JetStream on) and N nodes of the service, each its own
// process over its own data directory, on loopback. Nodes can be killed with SIGKILL, stopped and
// started again; the server can be restarted.
import type { Test } from 'tap';
import { TokenService, type Principal } from '../../core/auth/tokens.js';
import { TEST_JWT_SECRET, tempDir } from '../helpers/app.js';
import { runFixture, type Child } from '../helpers/child.js';
import { transpiled } from '../helpers/transpiled.js';
import { client } from '../helpers/http.js';
import { startNatsServer, type NatsServer } from '../helpers/nats-server.js';

interface Teardown {
  teardown(fn: () => unknown): void;
}

// Transpiled once per run: three nodes each compiling the sources would take most of a minute.
const fixture = transpiled('test/cluster/node-server.ts');

export interface TestNode {
  id: string;
  dataDir: string;
  url: string;
  child: Child;
}

export interface ClusterOptions {
  nodes?: number;
  orgs?: string[];
  leaseTtlMs?: number;
  retryMs?: number;
  /** More environment for every node (REPORT_HOLDS, say: node-server.ts). */
  env?: Record<string, string>;
}

export const tokens = new TokenService(TEST_JWT_SECRET, { accessTtlSeconds: 900, refreshTtlSeconds: 3600, cacheSize: 0 });

export function token(p: Partial<Principal> & { org: string }): string {
  return tokens.signAccess({
    sub: p.sub ?? 'staff-1',
    org: p.org,
    roles: p.roles ?? (p.kind === 'customer' ? [] : ['User']),
    kind: p.kind ?? 'staff',
    email: p.email ?? 'staff@example.com',
    ...(p.customerId ? { customerId: p.customerId } : {}),
  });
}

export function staffClient(url: string, org: string, sub = 'staff-1') {
  return client(url, { orgid: org, authorization: `Bearer ${token({ org, sub })}` });
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * Signs an organisation up through node `via`, then waits until every node knows it (its
 * organisation record reaches the others through the commit stream a moment later).
 */
export async function signupEverywhere(t: Pick<Test, 'ok'>, cluster: TestCluster, via: number, orgName: string) {
  const email = `owner-${Math.random().toString(36).slice(2, 8)}@example.com`;
  const r = await client(cluster.nodes[via].url).post('/profile/user/signup', { email, password: 'Correct-Horse-42!', orgName });
  if (r.status !== 201) throw new Error(`signup failed: ${r.status} ${r.text}`);
  const { orgId, token } = r.body as { orgId: string; token: string };
  const deadline = Date.now() + 5000;
  for (const n of cluster.nodes) {
    for (;;) {
      const probe = await client(n.url, { orgid: orgId, authorization: `Bearer ${token}` }).get('/repository/get/note/000000000000000000000000');
      if (probe.status === 404) break;
      if (Date.now() > deadline) throw new Error(`node ${n.id} does not know ${orgId}: ${probe.status} ${probe.text}`);
      await sleep(20);
    }
  }
  t.ok(orgId, `${orgId} signed up through node ${via + 1} and known to every node`);
  return { orgId, token, email };
}

export class TestCluster {
  readonly nodes: TestNode[] = [];
  readonly prefix = `t${Math.random().toString(36).slice(2, 8)}`;

  constructor(
    private readonly t: Teardown,
    readonly nats: NatsServer,
    private readonly opts: ClusterOptions,
  ) {}

  static async start(t: Teardown, opts: ClusterOptions = {}): Promise<TestCluster> {
    const nats = await startNatsServer();
    t.teardown(() => nats.stop());
    const c = new TestCluster(t, nats, opts);
    const n = opts.nodes ?? 3;
    // All at once: each makes sure the organisations exist (a second putOrg of one is harmless).
    c.nodes.push(...(await Promise.all(Array.from({ length: n }, (_, i) => c.launch(`node-${i + 1}`, tempDir(t, 'bp-cluster-'))))));
    return c;
  }

  private async launch(id: string, dataDir: string): Promise<TestNode> {
    const child = runFixture(fixture, [dataDir], {
      NATS_URL: this.nats.url,
      NODE_ID: id,
      CLUSTER_PREFIX: this.prefix,
      CLUSTER_LEASE_TTL_MS: String(this.opts.leaseTtlMs ?? 3000),
      CLUSTER_RETRY_MS: String(this.opts.retryMs ?? 12_000),
      ORGS: (this.opts.orgs ?? ['acme']).join(','),
      ...this.opts.env,
    });
    this.t.teardown(() => child.kill9());
    await child.waitFor((lines) => lines.some((l) => l.startsWith('ready ')), 60_000);
    const url = child.lines.find((l) => l.startsWith('ready '))!.split(' ')[1];
    return { id, dataDir, url, child };
  }

  /** Indexes of the running nodes that say they serve `tenant` now (their last `owns` line). */
  owners(tenant: string): number[] {
    const out: number[] = [];
    this.nodes.forEach((n, i) => {
      if (n.child.proc.exitCode !== null || n.child.proc.signalCode !== null) return;
      const last = [...n.child.lines].reverse().find((l) => l.startsWith('owns '));
      if (last && last.slice(5).split(',').includes(tenant)) out.push(i);
    });
    return out;
  }

  /** Tenants whose data node i's LMDB holds now (its last `holds` line; REPORT_HOLDS=1 only). */
  holds(i: number): string[] {
    const last = [...this.nodes[i].child.lines].reverse().find((l) => l.startsWith('holds '));
    return last && last !== 'holds -' ? last.slice(6).split(',') : [];
  }

  /** Waits until exactly one running node serves `tenant`; resolves its index. */
  async waitOwner(tenant: string, ms = 20_000, not?: number): Promise<number> {
    const deadline = Date.now() + ms;
    for (;;) {
      const o = this.owners(tenant);
      if (o.length === 1 && o[0] !== not) return o[0];
      if (Date.now() > deadline) throw new Error(`no single owner of ${tenant} within ${ms} ms (now: ${JSON.stringify(o)})`);
      await sleep(25);
    }
  }

  /** SIGKILL: no lease released, nothing flushed beyond what was acknowledged. */
  async kill9(i: number): Promise<void> {
    await this.nodes[i].child.kill9();
  }

  /** Starts node i again over its data directory, or over `dataDir` (an empty one, say); same NODE_ID. */
  async restart(i: number, dataDir?: string): Promise<TestNode> {
    const old = this.nodes[i];
    await old.child.kill9();
    this.nodes[i] = await this.launch(old.id, dataDir ?? old.dataDir);
    return this.nodes[i];
  }
}
