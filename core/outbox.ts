// Outgoing messages (email, SMS, print jobs, push) go through a provider interface. The default,
// `local`, delivers nothing: every message is recorded in the tenant's store (datatype
// `outbox_message`) where operators and tests can read it, and it says so in the log at start-up.
// Real adapters (SMTP through nodemailer, an SMS gateway) implement the same interface.
//
// Transactional outbox. A message caused by a write is queued in the SAME WriteBatch as the write
// (`queueMessage`, or `send` with a batch): its record in state `queued` and a key in the tenant's
// queue (kv namespace `outbox_queue`, keyed by due time), so a crash leaves both or neither. The
// dispatcher (core/outbox-dispatcher.ts) hands queued messages to the provider after commit,
// under the record id as a stable message id, and moves them to `sent` (or `failed` after bounded
// retries). `send` without a batch delivers at once (sign-in codes, which wait for nobody's write).
import type { Clock } from './clock.js';
import { systemClock } from './clock.js';
import type { Logger } from './log.js';
import { newRecord, type StoredRecord } from './store/record.js';
import { WriteBatch, type Store } from './store/store.js';

export const OUTBOX_DATATYPE = 'outbox_message';
/** Queued messages by due time: key `<dueAt, 15 digits>:<message id>`, so a listing is in send order. */
export const OUTBOX_QUEUE_NS = 'outbox_queue';

export type OutboxChannel = 'email' | 'sms' | 'print' | 'push' | 'voice';
export type OutboxState = 'queued' | 'sent' | 'failed';

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
  /** The provider that delivered it ('' while still queued for the dispatcher). */
  provider: string;
  /** When it was sent; while queued, when it was queued. */
  sentAt: string;
  state: OutboxState;
  /** Delivery attempts so far (queued messages that failed wait for a retry). */
  attempts: number;
}

/** What a provider reports for a delivered message. */
export interface Delivery {
  provider: string;
  /** The transport's id (SMTP `Message-ID`). */
  messageId?: string;
  /** Keep only the envelope once sent: the body and code leave the store (real transports). */
  redact?: boolean;
}

/** A delivery failure; `permanent` ones (a mailbox refused by the server) are not retried. */
export class OutboxDeliveryError extends Error {
  override name = 'OutboxDeliveryError';
  constructor(
    message: string,
    readonly permanent: boolean,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

export interface OutboxProvider {
  readonly name: string;
  /**
   * With `batch`: queues the message in it (`queueMessage`) for the dispatcher, atomically with the
   * change that caused it. Without: delivers it now and records it.
   */
  send(tenant: string, msg: OutboxMessage, batch?: WriteBatch): Promise<OutboxEntry>;
  /**
   * The dispatcher's call for a queued message. `messageId` is the record id, stable across
   * retries and restarts: a transport that keys on it (SMTP Message-ID) does not duplicate a
   * message sent again after a crash. Throws to be retried (OutboxDeliveryError for permanent).
   */
  deliver(tenant: string, msg: OutboxMessage, messageId: string): Promise<Delivery>;
}

/** The queue key of a message due at `dueAt`. */
export function queueKey(dueAt: number, id: string): string {
  return `${String(Math.max(0, Math.floor(dueAt))).padStart(15, '0')}:${id}`;
}

export function parseQueueKey(key: string): { dueAt: number; id: string } {
  const colon = key.indexOf(':');
  return { dueAt: Number(key.slice(0, colon)), id: key.slice(colon + 1) };
}

function clean(msg: OutboxMessage): Record<string, unknown> {
  return Object.fromEntries(Object.entries(msg).filter(([, v]) => v !== undefined));
}

/** Queues `msg` in `batch`: the message record (state `queued`) and its queue key. */
export function queueMessage(batch: WriteBatch, tenant: string, msg: OutboxMessage, now: number): OutboxEntry {
  const rec = newRecord(tenant, OUTBOX_DATATYPE, { ...clean(msg), attempts: 0, dueAt: now }, { state: 'queued', now });
  batch.putRecord(rec, 0);
  batch.putKv(tenant, OUTBOX_QUEUE_NS, queueKey(now, rec.sk), rec.sk);
  return entryOf(rec);
}

export function entryOf(r: StoredRecord): OutboxEntry {
  const d = r.data as Record<string, unknown>;
  return {
    ...(d as unknown as OutboxMessage),
    id: r.sk,
    provider: typeof d.provider === 'string' ? d.provider : '',
    sentAt: typeof d.sentAt === 'string' ? d.sentAt : r.createdate,
    state: r.state === 'sent' || r.state === 'failed' ? r.state : 'queued',
    attempts: typeof d.attempts === 'number' ? d.attempts : 0,
  };
}

export class LocalOutbox implements OutboxProvider {
  readonly name = 'local';
  constructor(
    private readonly store: Store,
    private readonly clock: Clock = systemClock,
    private readonly logger?: Logger,
  ) {
    logger?.info('outbox provider is "local": messages are recorded in the store, not delivered');
  }

  async send(tenant: string, msg: OutboxMessage, batch?: WriteBatch): Promise<OutboxEntry> {
    const now = this.clock.now();
    if (batch) return { ...queueMessage(batch, tenant, msg, now), provider: this.name };
    // Recording is this provider's delivery: sent as soon as it is stored.
    const at = new Date(now).toISOString();
    const rec = newRecord(tenant, OUTBOX_DATATYPE, { ...clean(msg), provider: this.name, attempts: 1, sentAt: at }, { state: 'sent', now });
    await this.store.commit(new WriteBatch().putRecord(rec, 0));
    return entryOf(rec);
  }

  async deliver(tenant: string, msg: OutboxMessage, messageId: string): Promise<Delivery> {
    this.logger?.debug({ tenant, messageId, channel: msg.channel, to: msg.to, kind: msg.kind }, 'outbox (local): message recorded, not delivered');
    return { provider: this.name };
  }
}

/** The messages recorded for a tenant, oldest first; optionally only those to one address. */
export function readOutbox(store: Store, tenant: string, to?: string): OutboxEntry[] {
  return store.scan(tenant, OUTBOX_DATATYPE, to ? { 'data.to': to } : undefined).map(entryOf);
}
