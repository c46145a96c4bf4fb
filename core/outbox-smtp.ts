// The `smtp` outbox provider: email goes out through an SMTP server (nodemailer). What was sent is
// still recorded in the tenant's store as an `outbox_message` for audit, but only its envelope
// (channel, to, subject, kind, message id): never the body or the code, so the operators' outbox
// listing cannot be used to read someone's sign-in code in production. Channels SMTP cannot carry
// (sms, push, print, voice) are handed to the fallback provider (the local one by default), and
// that is logged once per channel.
import nodemailer, { type Transporter } from 'nodemailer';
import type { Clock } from './clock.js';
import { systemClock } from './clock.js';
import { AppError } from './errors.js';
import type { Logger } from './log.js';
import { OUTBOX_DATATYPE, type OutboxEntry, type OutboxMessage, type OutboxProvider } from './outbox.js';
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

  async send(tenant: string, msg: OutboxMessage, batch?: WriteBatch): Promise<OutboxEntry> {
    if (msg.channel !== 'email') {
      if (!this.warned.has(msg.channel)) {
        this.warned.add(msg.channel);
        this.logger?.warn({ channel: msg.channel }, `smtp outbox cannot send ${msg.channel}; using the ${this.fallback.name} provider`);
      }
      return this.fallback.send(tenant, msg, batch);
    }
    let messageId: string | undefined;
    try {
      const info = await this.transport.sendMail({
        from: this.settings.from,
        to: msg.to,
        subject: msg.subject ?? '',
        text: msg.body,
      });
      messageId = typeof info.messageId === 'string' ? info.messageId : undefined;
    } catch (cause) {
      this.logger?.error({ err: cause, to: msg.to }, 'smtp send failed');
      throw new AppError('ERR_UNAVAILABLE', ['the email could not be sent; try again later'], { cause });
    }
    const data: Record<string, unknown> = { channel: msg.channel, to: msg.to, provider: this.name };
    if (msg.subject !== undefined) data.subject = msg.subject;
    if (msg.kind !== undefined) data.kind = msg.kind;
    if (messageId) data.messageId = messageId;
    const rec = newRecord(tenant, OUTBOX_DATATYPE, data, { state: 'sent', now: this.clock.now() });
    if (batch) batch.putRecord(rec, 0);
    else await this.store.commit(new WriteBatch().putRecord(rec, 0));
    return { ...msg, id: rec.sk, provider: this.name, sentAt: rec.createdate };
  }

  close(): void {
    this.transport.close();
  }
}
