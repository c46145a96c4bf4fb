// The `smtp` outbox provider: email goes out through an SMTP server (nodemailer). What was sent is
// still recorded in the tenant's store as an `outbox_message` for audit, but only its envelope
// (channel, to, subject, kind, message id): never the body or the code, so the operators' outbox
// listing cannot be used to read someone's sign-in code in production. Channels SMTP cannot carry
// (sms, push, print, voice) are handed to the fallback provider (the local one by default), and
// that is logged once per channel. Queued messages (core/outbox.ts) go out with the record id as
// their Message-ID, so a message sent again after a crash is recognisably the same message.
import nodemailer, { type Transporter } from 'nodemailer';
import type { Clock } from './clock.js';
import { systemClock } from './clock.js';
import { AppError } from './errors.js';
import type { Logger } from './log.js';
import {
  entryOf,
  OUTBOX_DATATYPE,
  OutboxDeliveryError,
  queueMessage,
  type Delivery,
  type OutboxEntry,
  type OutboxMessage,
  type OutboxProvider,
} from './outbox.js';
import { newRecord } from './store/record.js';
import { WriteBatch, type Store } from './store/store.js';

export interface SmtpSettings {
  host: string;
  port: number;
  secure: boolean;
  user: string | null;
  pass: string | null;
  from: string;
}

export class SmtpOutbox implements OutboxProvider {
  readonly name = 'smtp';
  private readonly transport: Transporter;
  private readonly warned = new Set<string>();

  constructor(
    private readonly store: Store,
    private readonly settings: SmtpSettings,
    private readonly fallback: OutboxProvider,
    private readonly clock: Clock = systemClock,
    private readonly logger?: Logger,
  ) {
    this.transport = nodemailer.createTransport({
      host: settings.host,
      port: settings.port,
      secure: settings.secure,
      auth: settings.user ? { user: settings.user, pass: settings.pass ?? '' } : undefined,
      connectionTimeout: 10_000,
      greetingTimeout: 10_000,
      socketTimeout: 20_000,
    });
    logger?.info({ host: settings.host, port: settings.port }, 'outbox provider is "smtp": email is delivered by SMTP');
  }

  private passOn(channel: string): boolean {
    if (channel === 'email') return false;
    if (!this.warned.has(channel)) {
      this.warned.add(channel);
      this.logger?.warn({ channel }, `smtp outbox cannot send ${channel}; using the ${this.fallback.name} provider`);
    }
    return true;
  }

  async send(tenant: string, msg: OutboxMessage, batch?: WriteBatch): Promise<OutboxEntry> {
    if (batch) return { ...queueMessage(batch, tenant, msg, this.clock.now()), provider: this.name };
    if (this.passOn(msg.channel)) return this.fallback.send(tenant, msg);
    let messageId: string | undefined;
    try {
      messageId = await this.mail(msg);
    } catch (cause) {
      this.logger?.error({ err: cause, to: msg.to }, 'smtp send failed');
      throw new AppError('ERR_UNAVAILABLE', ['the email could not be sent; try again later'], { cause });
    }
    const data: Record<string, unknown> = { channel: msg.channel, to: msg.to, provider: this.name };
    if (msg.subject !== undefined) data.subject = msg.subject;
    if (msg.kind !== undefined) data.kind = msg.kind;
    if (messageId) data.messageId = messageId;
    const now = this.clock.now();
    data.sentAt = new Date(now).toISOString();
    data.attempts = 1;
    const rec = newRecord(tenant, OUTBOX_DATATYPE, data, { state: 'sent', now });
    await this.store.commit(new WriteBatch().putRecord(rec, 0));
    return { ...entryOf(rec), body: msg.body, ...(msg.code !== undefined ? { code: msg.code } : {}) };
  }

  async deliver(tenant: string, msg: OutboxMessage, messageId: string): Promise<Delivery> {
    if (this.passOn(msg.channel)) return this.fallback.deliver(tenant, msg, messageId);
    try {
      const sent = await this.mail(msg, `<${messageId}@${this.domain}>`);
      return { provider: this.name, messageId: sent, redact: true };
    } catch (cause) {
      // 5xx: the server refused the message for good (unknown mailbox, policy); 4xx and network
      // errors may pass later.
      const code = (cause as { responseCode?: unknown }).responseCode;
      const permanent = typeof code === 'number' && code >= 500;
      throw new OutboxDeliveryError(`smtp: ${(cause as Error).message ?? String(cause)}`, permanent, { cause });
    }
  }

  /** The domain of the sender address, for Message-IDs. */
  private get domain(): string {
    const at = this.settings.from.lastIndexOf('@');
    const d = at >= 0 ? this.settings.from.slice(at + 1).replace(/[^A-Za-z0-9.-]/g, '') : '';
    return d || 'localhost';
  }

  private async mail(msg: OutboxMessage, messageId?: string): Promise<string | undefined> {
    const info = await this.transport.sendMail({
      from: this.settings.from,
      to: msg.to,
      subject: msg.subject ?? '',
      text: msg.body,
      ...(messageId ? { messageId } : {}),
    });
    return typeof info.messageId === 'string' ? info.messageId : undefined;
  }

  close(): void {
    this.transport.close();
  }
}
