// The records of events and ticketing (datatypes, event configuration, ticket numbers and
// claims, prices in minor units, a recorded payment): the layer under both the events area and the
// door scanner, so neither reaches into the other for them.
export * from './records.js';
export * from './money.js';
export type { Payment } from './payment.js';
