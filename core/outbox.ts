// Outgoing messages (email, SMS, print jobs, push) go through a provider interface. The default,
// `local`, sends nothing: it records every message in the tenant's store (datatype
// `outbox_message`) where operators and tests can read it, and says so in the log at start-up.
// Real adapters (SMTP through nodemailer, an SMS gateway) implement the same interface.
import type { Clock } from './clock.js';
import { systemClock } from './clock.js';
import type { Logger } from './log.js';
import { newRecord, type StoredRecord } from './store/record.js';
import { WriteBatch, type Store } from './store/store.js';

export const OUTBOX_DATATYPE = 'outbox_message';

export type OutboxChannel = 'email' | 'sms' | 'print' | 'push' | 'voice';

export interface OutboxMessage {
  channel: OutboxChannel;
  to: string;
  subject?: string;
  body: string;
  /** A one-time code carried by the message, kept so operators and tests can read it. */
  code?: string;
  /** What the message is about: `magic-code`, `2fa`, `receipt`, `reminder`, ... */
  kind?: string;
  /** Structured payload (a print job's document, a receipt). */
  payload?: Record<string, unknown>;
}

export interface OutboxEntry extends OutboxMessage {
  id: string;
  provider: string;
  sentAt: string;
}

export interface OutboxProvider {
  readonly name: string;
  /**
   * Sends (or, for `local`, records) a message. When `batch` is given the record is added to it,
   * so the message is queued atomically with the change that caused it.
   */
  send(tenant: string, msg: OutboxMessage, batch?: WriteBatch): Promise<OutboxEntry>;
}

export class LocalOutbox implements OutboxProvider {
  readonly name = 'local';
  constructor(
    private readonly store: Store,
    private readonly clock: Clock = systemClock,
    logger?: Logger,
  ) {
    logger?.info('outbox provider is "local": messages are recorded in the store, not delivered');
  }

  private entry(tenant: string, msg: OutboxMessage): StoredRecord {
    const clean = Object.fromEntries(Object.entries(msg).filter(([, v]) => v !== undefined));
    return newRecord(tenant, OUTBOX_DATATYPE, { ...clean, provider: this.name }, { state: 'queued', now: this.clock.now() });
  }

  async send(tenant: string, msg: OutboxMessage, batch?: WriteBatch): Promise<OutboxEntry> {
    const rec = this.entry(tenant, msg);
    if (batch) batch.putRecord(rec, 0);
    else await this.store.commit(new WriteBatch().putRecord(rec, 0));
    return { ...msg, id: rec.sk, provider: this.name, sentAt: rec.createdate };
  }
}

/** The messages recorded for a tenant, newest last; optionally only those to one address. */
export function readOutbox(store: Store, tenant: string, to?: string): OutboxEntry[] {
  return store
    .scan(tenant, OUTBOX_DATATYPE, to ? { 'data.to': to } : undefined)
    .map((r) => ({ ...(r.data as unknown as OutboxMessage), id: r.sk, provider: String(r.data.provider), sentAt: r.createdate }));
}
