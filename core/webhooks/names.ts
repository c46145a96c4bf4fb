// The event names an endpoint may subscribe to: every event of the catalogue (catalogue.ts, with
// each event's meaning, schema and example) but `ping`, which only the test route sends.
import { SUBSCRIBABLE_EVENTS } from './catalogue.js';

export const WEBHOOK_EVENTS: readonly string[] = SUBSCRIBABLE_EVENTS;

/** Sent by `POST /webhooks/endpoints/:id/test` only; an endpoint never subscribes to it. */
export const PING = 'ping';
