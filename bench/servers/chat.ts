// The chat edge under test: the real startApp with the chat module (socket.io on uWS, the
// community actors persisting every group message to LMDB, presence), configured from the
// environment like production (the harness sets PORT, HOST, DATA_DIR, LOG_LEVEL; the scenario
// sets JWT_SECRET so its client processes can sign tokens). The bench org is created on start.
import { WriteBatch } from '../../core/store/store.js';
import type { Module } from '../../edge/module.js';
import { chatModule } from '../../edge/modules/chat.js';
import { serve } from './serve.js';

const ORG = process.env.CHAT_ORG ?? 'bench';

const benchOrg: Module = {
  name: 'bench-org',
  async start(deps) {
    if (!deps.store.getOrg(ORG)) {
      await deps.store.commit(new WriteBatch().putOrg({ orgId: ORG, displayName: 'Chat bench', createdate: new Date().toISOString() }));
    }
  },
};

await serve('chat bench server', { modules: [benchOrg, chatModule] });
