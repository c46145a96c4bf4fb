// The crm area's public surface: what the edge and other areas may import.
export { createCrmApi, listCrm, type CrmApi, type CrmParts } from './api.js';
export { ACTIVITY_TYPES, type ActivityMsg, type Author, CUSTOMER_ACTIVITY_ACTOR, type IngestResult, LEAD_ACTOR, type LeadMsg, SOCIAL_ACTOR, SOCIAL_KINDS, type SocialItem, type SocialKind, type SocialSyncMsg, SUPPORT_TICKET_ACTOR, type TicketMsg, type TicketReply } from './messages.js';
export { CUSTOMER_ACTIVITY, customerActivityActor, normalizeEmail } from './customer-activity-actor.js';
export { LEAD, leadFilter } from './leads.js';
export { leadActor } from './lead-actor.js';
export { type CrmListing, crmListing, sourcesOf } from './listings.js';
export { CRM_LISTINGS_JOB, type CrmListingRead } from './listings-job.js';
export { SOCIAL_ACTIVITY, socialSyncActor } from './social-sync-actor.js';
export { SUPPORT_TICKET, SUPPORT_TICKET_MESSAGE, TICKET_PRIORITIES, TICKET_STATUSES, supportTicketActor } from './support-ticket-actor.js';
