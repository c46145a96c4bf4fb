// The server under test of the `soak` scenario: the real startApp with every module, configured
// from the environment like production (the harness sets PORT, HOST, DATA_DIR, LOG_LEVEL; the
// scenario sets JWT_SECRET so it can sign staff and customer tokens). The soak org is created on
// start.
import { WriteBatch } from '../../core/store/store.js';
import type { Module } from '../../edge/module.js';
import { MODULE_NAMES } from '../../edge/modules.js';
import { serve } from './serve.js';

const ORG = process.env.SOAK_ORG ?? 'soak';

const soakOrg: Module = {
  name: 'soak-org',
  async start(deps) {
    if (!deps.store.getOrg(ORG)) {
      await deps.store.commit(new WriteBatch().putOrg({ orgId: ORG, displayName: 'Soak bench', createdate: new Date().toISOString() }));
    }
  },
};

await serve('soak bench server', { modules: [soakOrg, ...MODULE_NAMES] });
