// A ClusterNode over its own LMDB in a temporary directory, for the cluster tests that drive nodes
// in process against a real nats-server (not test/helpers/app.js: they need no part of the HTTP
// app). The settings a test does not name are the ones those tests share: short leases and
// heartbeats, one replica.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Test } from 'tap';
import { ClusterNode, type ClusterOptions } from '../../core/cluster/node.js';
import { TenantEnvs } from '../../core/cluster/tenant-envs.js';
import { silentLogger } from '../../core/log.js';
import { LmdbStore } from '../../core/store/lmdb-store.js';
import type { StoredRecord } from '../../core/store/record.js';

/** A temporary directory removed when `t` ends. */
export function clusterTempDir(t: Test, prefix = 'bp-cluster-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

export interface TestClusterNode {
  node: ClusterNode;
  /** The node's store: the platform's environment and one per tenant it holds. */
  local: TenantEnvs;
  dir: string;
  /** Closes the node, then its store; once (also when `t` ends). */
  close(): Promise<void>;
}

export interface TestClusterNodeOptions extends Partial<Omit<ClusterOptions, 'local' | 'natsUrl' | 'nodeId' | 'prefix'>> {
  natsUrl: string;
  nodeId: string;
  prefix: string;
  /** The node's DATA_DIR (a new temporary one by default). */
  dir?: string;
  /** Runs first when the node closes (what the test attached to it). */
  beforeClose?: () => Promise<void>;
}

export async function startClusterNode(t: Test, { dir = clusterTempDir(t), beforeClose, ...opts }: TestClusterNodeOptions): Promise<TestClusterNode> {
  const local = await TenantEnvs.open({ dataDir: dir, platform: new LmdbStore({ path: dir, mapSizeGiB: 1 }), env: {} });
  const node = await ClusterNode.start({
    leaseTtlMs: 2000,
    replicas: 1,
    forwardTimeoutMs: 5000,
    retryMs: 4000,
    heartbeatMs: 100,
    logger: silentLogger,
    ...opts,
    local,
  });
  let closed = false;
  const close = async (): Promise<void> => {
    if (closed) return;
    closed = true;
    await beforeClose?.();
    await node.close();
    await local.close();
  };
  t.teardown(close);
  return { node, local, dir, close };
}

/** A record of datatype `thing`, as the in-process cluster tests write them. */
export function thingRecord(tenant: string, sk: string, version = 1, data: Record<string, unknown> = { sk }): StoredRecord {
  const at = '2026-01-01T00:00:00.000Z';
  return { pk: tenant, sk, datatype: 'thing', version, state: 'active', createdate: at, modifydate: at, data };
}
