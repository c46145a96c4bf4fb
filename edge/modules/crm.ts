// The CRM feature area (spec: Endpoints → CRM (staff)): leads, support tickets, customer
// activity, the inbox and the communications log; plus social sync and the integration
// catalogue, which have no module of their own.
import { createCrmApi, customerActivityActor, CUSTOMER_ACTIVITY, leadActor } from '../../actors/crm/index.js';
import { LEAD } from '../../actors/crm/index.js';
import { SOCIAL_ACTIVITY, socialSyncActor } from '../../actors/crm/index.js';
import { SUPPORT_TICKET, SUPPORT_TICKET_MESSAGE, supportTicketActor } from '../../actors/crm/index.js';
import { COMM_MESSAGE, createInboxApi, INBOX_CONVERSATION, inboxActor } from '../../actors/inbox/index.js';
import { CALL_RECORDING, PHONE_CALL } from '../../actors/phone/index.js';
import type { ActorKind } from '../../core/actor/runtime.js';
import type { Module } from '../module.js';
import { communicationRoutes } from '../routes/crm/communications.js';
import { customerActivityRoutes } from '../routes/crm/customer-activity.js';
import { inboxRoutes } from '../routes/crm/inbox.js';
import { leadRoutes } from '../routes/crm/leads.js';
import { ticketRoutes } from '../routes/crm/tickets.js';
import { integrationRoutes } from '../routes/integrations/catalogue.js';
import { socialRoutes } from '../routes/social/social.js';

// The ticket and inbox actors send through the node's outbox port (ctx.services.outbox).
const actors: ActorKind<any, any, any>[] = [
  supportTicketActor(),
  customerActivityActor,
  inboxActor(),
  socialSyncActor,
  leadActor,
];

export const crmModule: Module = {
  name: 'crm',
  actors,
  indexes: [
    [LEAD, 'data.status'],
    [LEAD, 'data.owner'],
    [SUPPORT_TICKET, 'data.status'],
    [SUPPORT_TICKET_MESSAGE, 'data.ticketId'],
    // Pinned: the chat module reads a person's activity for /chat/customers/:email/journey.
    [CUSTOMER_ACTIVITY, 'data.email'],
    [INBOX_CONVERSATION, 'data.channel'],
    [COMM_MESSAGE, 'data.conversationId'],
    [COMM_MESSAGE, 'data.channel'],
    [PHONE_CALL, 'data.status'],
    [CALL_RECORDING, 'data.callSid'],
    [SOCIAL_ACTIVITY, 'data.kind'],
  ],
  // Lists that page by index at any size: leads newest first (all, of a status, of an owner, of
  // both), support tickets newest first (all, of a status, an assignee or a requester), a support
  // ticket's thread and a conversation's messages in time order. Their other filters read the
  // smallest of these narrowed (listing-plan.ts narrowingListings).
  listings: [
    { datatype: LEAD, equals: [], sort: 'createdate' },
    { datatype: LEAD, equals: ['data.status'], sort: 'createdate' },
    { datatype: LEAD, equals: ['data.owner'], sort: 'createdate' },
    { datatype: LEAD, equals: ['data.owner', 'data.status'], sort: 'createdate' },
    { datatype: SUPPORT_TICKET, equals: [], sort: 'createdate' },
    { datatype: SUPPORT_TICKET, equals: ['data.status'], sort: 'createdate' },
    { datatype: SUPPORT_TICKET, equals: ['data.assignee'], sort: 'createdate' },
    { datatype: SUPPORT_TICKET, equals: ['data.requester.email'], sort: 'createdate' },
    { datatype: SUPPORT_TICKET_MESSAGE, equals: ['data.ticketId', 'data.kind'], sort: 'data.at' },
    { datatype: COMM_MESSAGE, equals: ['data.conversationId'], sort: 'data.at' },
  ],
  routes(deps) {
    const crm = createCrmApi(deps);
    return [
      ...leadRoutes(crm),
      ...ticketRoutes(crm),
      ...customerActivityRoutes(crm),
      ...inboxRoutes(crm, createInboxApi(deps)),
      ...communicationRoutes(crm),
      ...socialRoutes(crm),
      ...integrationRoutes(),
    ];
  },
};
