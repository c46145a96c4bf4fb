// Presence over REST (spec: Endpoints → Chat and presence; clients poll every 15 s): who is
// online, one agent's presence, an agent's status, a customer's journey, and totals.
import { Type } from '@sinclair/typebox';
// The CRM area records customer activity (data {email, type, name, importance, properties, at}).
import { CUSTOMER_ACTIVITY } from '../../../actors/crm/index.js';
import type { AppDeps } from '../../deps.js';
import { route, type RouteDef } from '../../route.js';
import type { ChatFeature } from '../../sockets/chat-feature.js';
import { ListOf, RecordSchema } from '../records/schemas.js';
import { OneOf } from '../../sockets/schemas.js';
import { EmailParam, pageOf, pageQuery, PresenceView, TAG_PRESENCE } from './common.js';
import { listRecords } from '../../../actors/records/index.js';

export function presenceRoutes(f: ChatFeature, deps: AppDeps): RouteDef[] {
  const max = deps.config.store.maxPageSize;
  const presence = f.api.presence;

  return [
    route({
      method: 'GET',
      path: '/chat/agents/online',
      auth: 'staff',
      tag: TAG_PRESENCE,
      summary: 'Agents online now (status online, away or busy)',
      query: Type.Object(pageQuery(max)),
      response: ListOf(PresenceView),
      handler: async (ctx) => pageOf(await presence.online(ctx.tenant, 'agent'), ctx.query, deps),
    }),

    route({
      method: 'GET',
      path: '/chat/agents/:email/presence',
      auth: 'staff',
      tag: TAG_PRESENCE,
      summary: "One agent's presence",
      description: 'An agent who never connected is reported offline with `lastSeen` null.',
      params: EmailParam,
      response: PresenceView,
      handler: (ctx) => presence.agent(ctx.tenant, ctx.params.email.toLowerCase()),
    }),

    route({
      method: 'POST',
      path: '/chat/agents/:email/status',
      auth: 'staff',
      tag: TAG_PRESENCE,
      summary: "Set an agent's status",
      description:
        'An agent sets their own status; setting someone else\'s needs a supervisor role (Admin, Supervisor or ChatSupervisor). A status posted here keeps the agent online for `chat.presenceTtlMs` (45 s) without a socket: clients poll every 15 s. `offline` hides the agent at once.',
      params: EmailParam,
      body: Type.Object({ status: OneOf(['online', 'away', 'busy', 'offline']) }),
      response: PresenceView,
      errors: [403],
      handler: (ctx) => {
        const p = ctx.principal!;
        return presence.setAgentStatus(ctx.tenant, { userId: p.sub, email: p.email ?? null, roles: p.roles }, ctx.params.email.toLowerCase(), ctx.body.status);
      },
    }),

    route({
      method: 'GET',
      path: '/chat/customers/online',
      auth: 'staff',
      tag: TAG_PRESENCE,
      summary: 'Customers online now (on the chat widget or the attendee community)',
      query: Type.Object(pageQuery(max)),
      response: ListOf(PresenceView),
      handler: async (ctx) => pageOf(await presence.online(ctx.tenant, 'customer'), ctx.query, deps),
    }),

    route({
      method: 'GET',
      path: '/chat/customers/:email/journey',
      auth: 'staff',
      tag: TAG_PRESENCE,
      summary: "A customer's journey: their recorded activity, newest first",
      description: 'The `customer_activity` records of this email (screen views, actions, searches, event actions). Empty when none were recorded.',
      params: EmailParam,
      query: Type.Object(pageQuery(max)),
      response: ListOf(RecordSchema),
      handler: (ctx) =>
        listRecords(deps, ctx.tenant, CUSTOMER_ACTIVITY, { 'data.email': ctx.params.email.toLowerCase() }, {
          page: ctx.query.page,
          pageSize: ctx.query.pageSize,
          sort: 'data.at',
          sortType: 'desc',
        }),
    }),

    route({
      method: 'GET',
      path: '/chat/presence/stats',
      auth: 'staff',
      tag: TAG_PRESENCE,
      summary: 'Presence totals: agents by status, customers online, open sockets',
      response: Type.Object({
        agents: Type.Object({ online: Type.Integer(), away: Type.Integer(), busy: Type.Integer(), offline: Type.Integer() }),
        customers: Type.Object({ online: Type.Integer(), offline: Type.Integer() }),
        connections: Type.Integer(),
        at: Type.String({ format: 'date-time' }),
      }),
      handler: (ctx) => presence.stats(ctx.tenant),
    }),
  ];
}
