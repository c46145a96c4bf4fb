// Cluster mode's start-up, from the configuration (DESIGN: Cluster mode): used by edge/app.ts only
// when NATS_URL is set; a single node never loads any of it.
import { ClusterNode } from '../core/cluster/node.js';
import type { Config } from '../core/config.js';
import type { Logger } from '../core/log.js';
import type { LmdbStore } from '../core/store/lmdb-store.js';

export async function startCluster(config: Config, local: LmdbStore, logger: Logger): Promise<ClusterNode> {
  if (!config.jwtSecret) {
    logger.warn('cluster mode without JWT_SECRET: every node must share one secret, or tokens and forwarded requests fail between nodes');
  }
  return ClusterNode.start({ ...config.cluster, natsUrl: config.natsUrl!, nodeId: config.nodeId!, local, logger });
}
