// The crm area's public surface: what the edge and other areas may import.
export { createCrmApi, listCrm, type CrmApi, type CrmParts } from './api.js';
export { ACTIVITY_TYPES, type ActivityMsg, CUSTOMER_ACTIVITY, CUSTOMER_ACTIVITY_ACTOR, customerActivityActor, normalizeEmail } from './customer-activity-actor.js';
export { LEAD, leadFilter } from './leads.js';
export { LEAD_ACTOR, leadActor, type LeadMsg } from './lead-actor.js';
export { type CrmListing, crmListing, sourcesOf } from './listings.js';
export { CRM_LISTINGS_JOB, type CrmListingRead } from './listings-job.js';
export { type IngestResult, SOCIAL_ACTIVITY, SOCIAL_ACTOR, SOCIAL_KINDS, type SocialItem, type SocialKind, socialSyncActor } from './social-sync-actor.js';
export { type Author, SUPPORT_TICKET, SUPPORT_TICKET_ACTOR, SUPPORT_TICKET_MESSAGE, TICKET_PRIORITIES, TICKET_STATUSES, type TicketMsg, type TicketReply, supportTicketActor } from './support-ticket-actor.js';
