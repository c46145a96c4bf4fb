// Every feature area of the service, in start-up order. Adding a module here is all it takes for
// its actors, indexes and routes (and so its OpenAPI entries) to exist.
import type { Module } from './module.js';
import { authModule } from './modules/auth.js';
import { chatModule } from './modules/chat.js';
import { checkinModule } from './modules/checkin.js';
import { crmModule } from './modules/crm.js';
import { eventsModule } from './modules/events.js';
import { phoneModule } from './modules/phone.js';
import { recordsModule } from './modules/records.js';
import { referenceModule } from './modules/reference.js';
import { reservationsModule } from './modules/reservations.js';
import { storefrontModule } from './modules/storefront.js';
import { workflowModule } from './modules/workflow.js';

export const modules: Module[] = [
  authModule,
  recordsModule,
  workflowModule,
  reservationsModule,
  checkinModule,
  storefrontModule,
  eventsModule,
  chatModule,
  crmModule,
  phoneModule,
  // Last by convention; it reads the complete route table at start-up.
  referenceModule,
];
