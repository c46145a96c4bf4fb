// Cluster mode's start-up, from the configuration (DESIGN: Cluster mode): used by edge/app.ts only
// when NATS_URL is set; a single node never loads any of it.
import { ClusterNode } from '../core/cluster/node.js';
import type { Config } from '../core/config.js';
import type { Logger } from '../core/log.js';
import { TenantEnvs, type TenantEnvOptions } from '../core/cluster/tenant-envs.js';
import type { LmdbStore } from '../core/store/lmdb-store.js';

/** `platform`: the node's store at DATA_DIR; each tenant the node holds gets an environment of its own, opened with `env`. */
export async function startCluster(config: Config, platform: LmdbStore, env: TenantEnvOptions, logger: Logger): Promise<ClusterNode> {
  if (!config.jwtSecret) {
    logger.warn('cluster mode without JWT_SECRET: every node must share one secret, or tokens and forwarded requests fail between nodes');
  }
  const local = await TenantEnvs.open({ dataDir: config.dataDir, platform, env, logger });
  try {
    return await ClusterNode.start({ ...config.cluster, natsUrl: config.natsUrl!, nodeId: config.nodeId!, local, logger });
  } catch (err) {
    await local.close().catch(() => undefined);
    throw err;
  }
}
