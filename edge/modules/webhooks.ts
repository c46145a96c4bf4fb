// The webhooks feature area (issue 34): endpoints, their deliveries and the actor that changes
// them. Events are queued by every other area through the node's port (ctx.services.webhooks) and
// delivered by the node's dispatcher (edge/app.ts), which run whether or not this module does.
import { WebhooksApi, webhooksActor } from '../../actors/webhooks/index.js';
import { WebhookHub } from '../../core/webhooks/hub.js';
import type { Module } from '../module.js';
import { endpointRoutes } from '../routes/webhooks/endpoints.js';

export const webhooksModule: Module = {
  name: 'webhooks',
  actors: [webhooksActor],
  routes: (deps) => {
    const hub = deps.services.webhooks;
    const api = new WebhooksApi({
      store: deps.store,
      runtime: deps.runtime,
      clock: deps.clock,
      hub: hub instanceof WebhookHub ? hub : undefined,
      policy: { allowHosts: deps.config.webhooks.allowHosts.map((h) => h.toLowerCase()) },
      maxEndpoints: deps.config.webhooks.maxEndpoints,
    });
    return endpointRoutes(api);
  },
};
