// Support chat: the steps that span more than one actor (the chat, the tenant's
// queue), and the events they announce. Actors never ask each other here (no ask cycles); this
// service asks them in turn. The chat actor is the authority on a chat's status, so a step that
// fails half-way leaves the queue at worst holding a chat that the next pick skips.
//
// Events always go out after the actor's reply, which the runtime releases only after the writes
// it depends on are committed: an acknowledged or broadcast message is durable.
import type { ActorRuntime } from '../../core/actor/runtime.js';
import { CHAT_QUEUE_ACTOR, entryFromChat, QUEUE_KEY, type QueueMsg, type QueueReply } from '../chat-queue/index.js';
import {
  CHAT_CONFIG_DATATYPE,
  CHAT_DATATYPE,
  CHAT_ROOM_ACTOR,
  chatLog,
  emptyReceipts,
  messageStatus,
  type ChatData,
  type ChatMessage,
  type ChatRoomMsg,
  type ChatRoomReply,
  type ListedMessage,
  type OpenSpec,
  type Participant,
} from '../chat-room/index.js';
import type { AiMessage } from '../../core/ai.js';
import type { OnOwner, OwnerReads } from '../../core/cluster/owner-reads-actor.js';
import { HANDOVER_REPLY } from '../../core/ai.js';
import { AppError, appError } from '../../core/errors.js';
import type { StoredRecord } from '../../core/store/record.js';
import type { Store } from '../../core/store/store.js';
import type { AiStream, AiStreams } from './ai-streams.js';
import type { ChatServices, Origin } from './ports.js';
import type { PresenceService } from './presence-service.js';


export const AI_PARTICIPANT: Participant = { id: 'ai', role: 'ai', name: 'Assistant' };
const SYSTEM: Participant = { id: 'system', role: 'system' };
/** Messages of history an AI answer sees. */
const AI_CONTEXT = 20;
/** Waiting chats listed in queue-updated. */
const QUEUE_PREVIEW = 50;
/** Chats of one customer whose messages customerMessages reads at most. */
const MAX_CHATS_PER_CUSTOMER = 200;

export interface WidgetConfig {
  chatId: string;
  greeting: string;
  departments: Array<{ id: string; name: string }>;
  aiEnabled: boolean;
  aiName: string;
  offlineMessage: string;
  requireEmail: boolean;
}

export const DEFAULT_WIDGET: Omit<WidgetConfig, 'chatId'> = {
  greeting: 'Hi! How can we help you today?',
  departments: [],
  aiEnabled: true,
  aiName: 'Assistant',
  offlineMessage: 'We are offline right now. Leave a message and we will get back to you.',
  requireEmail: false,
};

export interface MessagePage {
  chatId: string;
  messages: ListedMessage[];
  hasMore: boolean;
  lastSeq: number;
}

type ChatPaging = { afterSeq?: number; beforeSeq?: number; limit?: number };

export class ChatService {
  /** AI answers in flight, aborted when the node stops. */
  private readonly running = new Set<AbortController>();
  /**
   * What this service reads of a tenant, read on the node that serves it (owner-reads-actor.ts): its
   * callers (a socket's events) run on any node. The `*Here` methods read this node's store: they
   * run on the owner.
   */
  private readonly onOwner: {
    chat: OnOwner<string, ChatData | null>;
    config: OnOwner<string, WidgetConfig & { source: 'widget' | 'default' | 'built-in' }>;
    messages: OnOwner<{ chatId: string; p: ChatPaging }, MessagePage>;
    historyPage: OnOwner<{ chatId: string; p: ChatPaging }, ReturnType<ChatService['historyPageHere']>>;
    lastSeqs: OnOwner<string[], number[]>;
    customerMessages: OnOwner<{ email: string; paging: { offset: number; pageSize: number } }, { data: ListedMessage[]; total: number }>;
    history: OnOwner<string, AiMessage[]>;
  };

  constructor(
    private readonly runtime: ActorRuntime,
    private readonly store: Store,
    private readonly services: ChatServices,
    private readonly streams: AiStreams,
    private readonly presence: PresenceService,
    reads: OwnerReads,
  ) {
    this.onOwner = {
      chat: reads.define('chat.chat', (tenant, chatId: string) => this.chatHere(tenant, chatId) ?? null),
      config: reads.define('chat.config', (tenant, id: string) => this.configHere(tenant, id)),
      messages: reads.define('chat.messages', (tenant, a: { chatId: string; p: ChatPaging }) => this.messagesHere(tenant, a.chatId, a.p)),
      historyPage: reads.define('chat.history-page', (tenant, a: { chatId: string; p: ChatPaging }) => this.historyPageHere(tenant, a.chatId, a.p)),
      lastSeqs: reads.define('chat.last-seqs', (tenant, ids: string[]) => ids.map((id) => this.store.lastLogSeq(tenant, chatLog(id)))),
      customerMessages: reads.define('chat.customer-messages', (tenant, a: { email: string; paging: { offset: number; pageSize: number } }) =>
        this.customerMessagesHere(tenant, a.email, a.paging),
      ),
      history: reads.define('chat.ai-history', (tenant, chatId: string) => this.historyHere(tenant, chatId)),
    };
  }

  room(tenant: string, chatId: string, msg: ChatRoomMsg): Promise<ChatRoomReply> {
    return this.runtime.ask<ChatRoomReply>(tenant, CHAT_ROOM_ACTOR, chatId, msg);
  }

  queue(tenant: string, msg: QueueMsg): Promise<QueueReply> {
    return this.runtime.ask<QueueReply>(tenant, CHAT_QUEUE_ACTOR, QUEUE_KEY, msg);
  }

  /** The chat as its tenant's owner has it. */
  async chat(tenant: string, chatId: string): Promise<ChatData | undefined> {
    return (await this.onOwner.chat(tenant, chatId)) ?? undefined;
  }

  private chatHere(tenant: string, chatId: string): ChatData | undefined {
    return (this.store.getRecord(tenant, CHAT_DATATYPE, chatId) as StoredRecord<ChatData> | undefined)?.data;
  }

  private now(): string {
    return new Date(this.services.clock.now()).toISOString();
  }

  private get fanout() {
    return this.services.fanout;
  }

  /** The queue to staff, and each waiting customer's position to their chat. */
  private announceQueue(tenant: string, q: QueueReply): void {
    this.fanout.queueUpdated(tenant, { waiting: q.waiting, chats: q.entries.slice(0, QUEUE_PREVIEW) });
    for (const e of q.entries) this.fanout.queuePosition(tenant, e.chatId, { chatId: e.chatId, position: e.position, waiting: q.waiting });
  }

  private async enqueue(tenant: string, chat: ChatData): Promise<QueueReply> {
    const q = await this.queue(tenant, { type: 'enqueue', entry: entryFromChat(chat, Date.parse(chat.queuedAt ?? this.now())) });
    if (q.changed) this.announceQueue(tenant, q);
    return q;
  }

  private async dequeue(tenant: string, chatId: string): Promise<void> {
    const q = await this.queue(tenant, { type: 'remove', chatId });
    if (q.changed) this.announceQueue(tenant, q);
  }

  private statusUpdate(tenant: string, chat: ChatData): void {
    this.fanout.chatUpdate(tenant, chat.chatId, { chatId: chat.chatId, type: 'status', status: chat.status, agent: chat.agent, at: this.now() });
  }

  /** Widget configuration: the `chat_config` record for this id, else the tenant default, else built-in. */
  config(tenant: string, id: string): Promise<WidgetConfig & { source: 'widget' | 'default' | 'built-in' }> {
    return this.onOwner.config(tenant, id);
  }

  private configHere(tenant: string, id: string): WidgetConfig & { source: 'widget' | 'default' | 'built-in' } {
    const find = (key: string) => this.store.find(tenant, CHAT_CONFIG_DATATYPE, { 'data.chatId': key }, { pageSize: 1 }).data[0];
    let rec = find(id);
    let source: 'widget' | 'default' | 'built-in' = 'widget';
    if (!rec) {
      // A conversation's id: the configuration of the widget it was opened from.
      const widget = this.chatHere(tenant, id)?.widgetId;
      if (widget) rec = find(widget);
    }
    if (!rec) {
      rec = find('default');
      source = rec ? 'default' : 'built-in';
    }
    const d = (rec?.data ?? {}) as Partial<WidgetConfig>;
    return {
      chatId: id,
      greeting: typeof d.greeting === 'string' ? d.greeting : DEFAULT_WIDGET.greeting,
      departments: Array.isArray(d.departments) ? d.departments : DEFAULT_WIDGET.departments,
      aiEnabled: typeof d.aiEnabled === 'boolean' ? d.aiEnabled : DEFAULT_WIDGET.aiEnabled,
      aiName: typeof d.aiName === 'string' ? d.aiName : DEFAULT_WIDGET.aiName,
      offlineMessage: typeof d.offlineMessage === 'string' ? d.offlineMessage : DEFAULT_WIDGET.offlineMessage,
      requireEmail: typeof d.requireEmail === 'boolean' ? d.requireEmail : DEFAULT_WIDGET.requireEmail,
      source,
    };
  }

  async request(
    tenant: string,
    customer: Participant,
    p: { chatId: string; department?: string | null; subject?: string | null; widgetId?: string | null; sessionId?: string | null },
  ): Promise<{ chatId: string; status: string; position: number | null; waiting: number }> {
    const r = await this.room(tenant, p.chatId, { type: 'request', customer, ...p });
    const chat = r.chat!;
    let q: QueueReply | undefined;
    if (r.changed && chat.status === 'queued') {
      q = await this.enqueue(tenant, chat);
      if (r.previous) this.statusUpdate(tenant, chat);
    } else if (chat.status === 'queued') {
      q = await this.queue(tenant, { type: 'position', chatId: chat.chatId });
    }
    return { chatId: chat.chatId, status: chat.status, position: q?.entry?.position ?? null, waiting: q?.waiting ?? 0 };
  }

  /**
   * Stores a message (acked with it) and broadcasts it to everyone in the chat but the sending
   * socket; a customer's message to the AI gets an answer.
   */
  async send(
    tenant: string,
    from: Participant,
    p: { chatId: string; text: string; clientId?: string; metadata?: Record<string, unknown> },
    open?: OpenSpec,
    sender?: Origin,
  ): Promise<ChatMessage> {
    const r = await this.room(tenant, p.chatId, { type: 'send', from, text: p.text, clientId: p.clientId, metadata: p.metadata, open });
    const m = r.message!;
    if (r.duplicate) return m;
    this.fanout.message(tenant, m, sender);
    const chat = r.chat!;
    if (r.changed && chat.status === 'queued') await this.enqueue(tenant, chat);
    if (from.role === 'customer' && chat.status === 'ai') this.aiReply(tenant, chat);
    return m;
  }

  async pickNext(tenant: string, agent: Participant, department?: string | null): Promise<ChatData | null> {
    // A picked chat that no longer waits (closed, taken over meanwhile) is skipped.
    for (let attempt = 0; attempt < 50; attempt++) {
      const q = await this.queue(tenant, { type: 'pick', department });
      if (!q.entry) return null;
      this.announceQueue(tenant, q);
      let r: ChatRoomReply;
      try {
        r = await this.room(tenant, q.entry.chatId, { type: 'assign', agent, from: ['queued'] });
      } catch (err) {
        if (err instanceof AppError && (err.code === 'ERR_CONFLICT' || err.code === 'ERR_NOT_FOUND')) continue;
        // The chat still waits: put it back where it was.
        await this.queue(tenant, { type: 'enqueue', entry: q.entry }).catch(() => undefined);
        throw err;
      }
      this.assigned(tenant, r.chat!, agent);
      return r.chat!;
    }
    return null;
  }

  private assigned(tenant: string, chat: ChatData, agent: Participant): void {
    this.fanout.follow(tenant, agent.id, chat.chatId);
    this.fanout.chatAssigned(tenant, agent.id, { chatId: chat.chatId, chat });
    this.fanout.agentAssigned(tenant, chat.chatId, { chatId: chat.chatId, agent });
  }

  async takeover(tenant: string, agent: Participant, chatId: string): Promise<ChatData> {
    const r = await this.room(tenant, chatId, { type: 'assign', agent, from: ['ai', 'queued'] });
    if (r.previous === 'queued') await this.dequeue(tenant, chatId);
    this.assigned(tenant, r.chat!, agent);
    return r.chat!;
  }

  /** Finds an online agent by user id or email (transfers go to someone who can answer). */
  private async onlineAgent(tenant: string, who: string): Promise<Participant> {
    const r = await this.presence.ask(tenant, { type: 'list', kind: 'agent', onlineOnly: true });
    const needle = who.toLowerCase();
    const a = r.users?.find((u) => u.userId === who || u.email === needle);
    if (!a) throw appError('ERR_CONFLICT', `agent ${who} is not online`);
    const p: Participant = { id: a.userId, role: 'agent' };
    if (a.name) p.name = a.name;
    if (a.email) p.email = a.email;
    return p;
  }

  async transfer(
    tenant: string,
    by: Participant,
    p: { chatId: string; toAgent?: string; department?: string; note?: string },
    supervisor: boolean,
  ): Promise<ChatData> {
    const to = p.toAgent ? await this.onlineAgent(tenant, p.toAgent) : null;
    const r = await this.room(tenant, p.chatId, { type: 'transfer', by, to, department: p.department, note: p.note, supervisor });
    const chat = r.chat!;
    const t = chat.transfers[chat.transfers.length - 1];
    const from = t.from;
    const event = { chatId: chat.chatId, from, to, department: t.department, note: t.note, chat, at: t.at };
    if (from) {
      this.fanout.chatTransferred(tenant, from.id, event);
      this.fanout.unfollow(tenant, from.id, chat.chatId);
    }
    if (to) {
      this.fanout.follow(tenant, to.id, chat.chatId);
      this.fanout.chatTransferred(tenant, to.id, event);
    }
    this.fanout.agentChanged(tenant, chat.chatId, { chatId: chat.chatId, agent: to, previousAgent: from, at: t.at });
    // A supervisor may transfer a chat that still waits: it leaves the queue for its agent, or
    // goes to the back of it under its new department (as the chat record now says).
    if (r.previous === 'queued') await this.dequeue(tenant, chat.chatId);
    if (!to) await this.enqueue(tenant, chat);
    return chat;
  }

  async resumeAi(tenant: string, by: Participant, chatId: string): Promise<ChatData> {
    const current = await this.chat(tenant, chatId);
    if (!current) throw appError('ERR_NOT_FOUND', 'chat');
    if (!(await this.config(tenant, chatId)).aiEnabled) throw appError('ERR_CONFLICT', 'the AI is turned off for this chat');
    const r = await this.room(tenant, chatId, { type: 'resume-ai', by });
    const chat = r.chat!;
    if (!r.changed) return chat;
    if (r.previous === 'queued') await this.dequeue(tenant, chatId);
    if (current.agentId) this.fanout.unfollow(tenant, current.agentId, chatId);
    this.statusUpdate(tenant, chat);
    this.aiReply(tenant, chat);
    return chat;
  }

  async requeue(tenant: string, by: Participant, chatId: string, department?: string | null): Promise<{ chat: ChatData; position: number | null; waiting: number }> {
    const r = await this.room(tenant, chatId, { type: 'requeue', by, department });
    const chat = r.chat!;
    const q = r.changed ? await this.enqueue(tenant, chat) : await this.queue(tenant, { type: 'position', chatId });
    if (r.changed) this.statusUpdate(tenant, chat);
    return { chat, position: q.entry?.position ?? null, waiting: q.waiting };
  }

  async close(tenant: string, by: Participant, chatId: string, reason?: string | null): Promise<ChatData> {
    const r = await this.room(tenant, chatId, { type: 'close', by, reason });
    const chat = r.chat!;
    if (!r.changed) return chat;
    if (r.previous === 'queued') await this.dequeue(tenant, chatId);
    this.fanout.chatEnded(tenant, chatId, { chatId, closedBy: chat.closedBy, reason: chat.closeReason, at: chat.closedAt });
    if (chat.agentId) this.fanout.unfollow(tenant, chat.agentId, chatId);
    return chat;
  }

  async receipt(tenant: string, by: Participant, chatId: string, seq: number, status: 'delivered' | 'read', messageId?: string) {
    const r = await this.room(tenant, chatId, { type: 'receipt', by, seq, status });
    const event = { chatId, seq, status, messageId: messageId ?? null, by, at: this.now() };
    if (r.changed) this.fanout.receipts(tenant, chatId, event);
    return { ...event, receipts: r.chat!.receipts };
  }

  /** A chat with its messages as GET /chat/history pages them. */
  historyPage(tenant: string, chatId: string, p: ChatPaging) {
    return this.onOwner.historyPage(tenant, { chatId, p });
  }

  private historyPageHere(tenant: string, chatId: string, p: ChatPaging) {
    const page = this.messagesHere(tenant, chatId, p);
    return { chatId: page.chatId, chat: this.chatHere(tenant, chatId)!, data: page.messages, hasMore: page.hasMore, lastSeq: page.lastSeq };
  }

  /** The chat records with the seq of their latest message (`data.lastSeq`). */
  async withLastSeq<R extends { sk: string; data: Record<string, unknown> }>(tenant: string, records: R[]): Promise<R[]> {
    const seqs = await this.onOwner.lastSeqs(tenant, records.map((r) => r.sk));
    return records.map((r, i) => ({ ...r, data: { ...r.data, lastSeq: seqs[i] } }));
  }

  /**
   * One customer's messages across their chats (at most MAX_CHATS_PER_CUSTOMER of them), newest
   * first: the page at `offset`, and the total.
   */
  customerMessages(tenant: string, email: string, paging: { offset: number; pageSize: number }): Promise<{ data: ListedMessage[]; total: number }> {
    return this.onOwner.customerMessages(tenant, { email, paging });
  }

  private customerMessagesHere(tenant: string, email: string, paging: { offset: number; pageSize: number }): { data: ListedMessage[]; total: number } {
    const chats = this.store.find(tenant, CHAT_DATATYPE, { 'data.customerEmail': email }, { sort: 'createdate', sortType: 'desc', pageSize: MAX_CHATS_PER_CUSTOMER })
      .data as StoredRecord<ChatData>[];
    // A chat's seqs run from 1 without gaps, newest last: the page is among the newest
    // `offset + pageSize` messages of each chat, so only those are read (a customer's long
    // chats are not read whole for the first page), and the total is the sum of last seqs.
    const need = paging.offset + paging.pageSize;
    let total = 0;
    const newest: ListedMessage[] = [];
    for (const c of chats) {
      const log = chatLog(c.sk);
      const last = this.store.lastLogSeq(tenant, log);
      if (last === 0) continue;
      total += last;
      const receipts = c.data.receipts ?? emptyReceipts();
      const n = Math.min(need, last);
      for (const { entry } of this.store.readLog<ChatMessage>(tenant, log, last - n + 1, n)) newest.push({ ...entry, status: messageStatus(entry, receipts) });
    }
    newest.sort((a, b) => (a.at < b.at ? 1 : a.at > b.at ? -1 : b.seq - a.seq));
    return { data: newest.slice(paging.offset, paging.offset + paging.pageSize), total };
  }

  /** The chats waiting for an agent (of one department), longest-waiting first, with their wait. */
  async waitingList(tenant: string, department?: string) {
    const q = await this.queue(tenant, { type: 'list' });
    const now = this.services.clock.now();
    const entries = department ? q.entries.filter((e) => e.department === department) : q.entries;
    return entries.map((e) => ({ ...e, queuedAt: new Date(e.queuedAt).toISOString(), waitSeconds: Math.max(0, Math.floor((now - e.queuedAt) / 1000)) }));
  }

  /** Queue length and waiting times, and how many agents are available. */
  async queueStats(tenant: string) {
    const [q, p] = await Promise.all([this.queue(tenant, { type: 'list' }), this.presence.ask(tenant, { type: 'stats' })]);
    const now = this.services.clock.now();
    const waits = q.entries.map((e) => Math.max(0, Math.floor((now - e.queuedAt) / 1000)));
    const byDepartment: Record<string, number> = {};
    for (const e of q.entries) byDepartment[e.department ?? 'none'] = (byDepartment[e.department ?? 'none'] ?? 0) + 1;
    const a = p.stats!.agents;
    return {
      waiting: q.waiting,
      longestWaitSeconds: waits.length ? Math.max(...waits) : 0,
      averageWaitSeconds: waits.length ? Math.round(waits.reduce((x, y) => x + y, 0) / waits.length) : 0,
      byDepartment,
      agentsOnline: a.online + a.away + a.busy,
      agentsAvailable: a.online,
    };
  }

  /** A chat's place in the queue (null unless it waits). */
  async position(tenant: string, chatId: string): Promise<{ chatId: string; status: string; position: number | null; waiting: number }> {
    const chat = await this.chat(tenant, chatId);
    if (!chat) throw appError('ERR_NOT_FOUND', 'chat');
    const q = await this.queue(tenant, { type: 'position', chatId });
    return { chatId: chat.chatId, status: chat.status, position: q.entry?.position ?? null, waiting: q.waiting };
  }

  /** A participant's typing, idle or page, to everyone in the chat (nothing stored). */
  shareStatus(tenant: string, from: Participant, chatId: string, status: string, page: string | null) {
    const event = { chatId, type: 'participant-status', from, status, page, at: this.now() };
    this.fanout.chatUpdate(tenant, chatId, event);
    return event;
  }

  /** A page of a chat's messages by sequence: after `afterSeq`, or the `limit` before `beforeSeq` (default: the latest). */
  messages(tenant: string, chatId: string, p: ChatPaging): Promise<MessagePage> {
    return this.onOwner.messages(tenant, { chatId, p });
  }

  private messagesHere(tenant: string, chatId: string, p: ChatPaging): MessagePage {
    const chat = this.chatHere(tenant, chatId);
    if (!chat) throw appError('ERR_NOT_FOUND', 'chat');
    const limit = Math.min(Math.max(p.limit ?? 50, 1), 200);
    const log = chatLog(chatId);
    const lastSeq = this.store.lastLogSeq(tenant, log);
    const receipts = chat.receipts ?? emptyReceipts();
    let entries;
    let hasMore: boolean;
    if (p.afterSeq !== undefined) {
      entries = this.store.readLog<ChatMessage>(tenant, log, p.afterSeq + 1, limit);
      hasMore = entries.length > 0 && entries[entries.length - 1].seq < lastSeq;
    } else {
      const before = Math.min(p.beforeSeq ?? lastSeq + 1, lastSeq + 1);
      const from = Math.max(1, before - limit);
      entries = before > 1 ? this.store.readLog<ChatMessage>(tenant, log, from, before - from) : [];
      hasMore = from > 1;
    }
    return { chatId, messages: entries.map((e) => ({ ...e.entry, status: messageStatus(e.entry, receipts) })), hasMore, lastSeq };
  }

  private historyHere(tenant: string, chatId: string): AiMessage[] {
    const last = this.store.lastLogSeq(tenant, chatLog(chatId));
    const out: AiMessage[] = [];
    for (const { entry } of this.store.readLog<ChatMessage>(tenant, chatLog(chatId), Math.max(1, last - AI_CONTEXT + 1))) {
      if (entry.type !== 'text') continue;
      out.push({ role: entry.from.role === 'customer' ? 'user' : 'assistant', content: entry.text });
    }
    return out;
  }

  /**
   * Streams the provider's answer as `chunk` events into `s`, then calls `done` with the whole
   * text. Returns once the stream has ended (failures end it with `error`).
   */
  private async run(
    tenant: string,
    s: AiStream,
    history: Promise<AiMessage[]>,
    chunk: (index: number, text: string) => void,
    done: (text: string, handover: boolean, faqId: string | undefined) => Promise<Record<string, unknown>>,
  ): Promise<void> {
    let text = '';
    const abort = new AbortController();
    this.running.add(abort);
    try {
      const messages = await history;
      const answer = await this.services.ai.answer({ tenant, messages, purpose: s.purpose, signal: abort.signal });
      let index = 0;
      for await (const c of answer.chunks) {
        text += c;
        this.streams.push(s, c);
        chunk(index++, c);
      }
      if (abort.signal.aborted) {
        this.streams.finish(s, { error: 'the server is shutting down' });
        return;
      }
      const handover = answer.handover || text.trim() === '';
      if (text.trim() === '') {
        text = HANDOVER_REPLY;
        this.streams.push(s, text);
        chunk(index, text);
      }
      const end = await done(text, handover, answer.faqId);
      this.streams.finish(s, { ...end, handover });
    } catch (err) {
      this.services.logger.warn({ err, tenant, chatId: s.chatId }, 'AI answer failed');
      const message = err instanceof AppError ? err.message : 'the AI answer failed';
      this.streams.finish(s, { error: message });
      try {
        chunk(-1, '');
      } catch {
        // the node is stopping: nobody left to tell
      }
    } finally {
      this.running.delete(abort);
    }
  }

  /** Stops the AI answers in flight (node shutdown). */
  shutdown(): void {
    for (const a of this.running) a.abort();
    this.running.clear();
  }

  /** The AI answers the customer's latest message: ai-stream chunks, then the stored message. */
  aiReply(tenant: string, chat: ChatData): AiStream {
    const s = this.streams.create(chat.chatId, 'reply', { tenant, customerId: chat.customer.id, staffOnly: false });
    const chatId = chat.chatId;
    void this.run(
      tenant,
      s,
      this.onOwner.history(tenant, chatId),
      (index, c) => {
        if (index < 0) this.fanout.aiStream(tenant, chatId, { chatId, streamId: s.id, done: true, error: s.end?.error });
        else this.fanout.aiStream(tenant, chatId, { chatId, streamId: s.id, index, chunk: c, done: false });
      },
      async (text, handover, faqId) => {
        const m = await this.send(tenant, AI_PARTICIPANT, { chatId, text, metadata: { streamId: s.id, handover, ...(faqId ? { faqId } : {}) } });
        this.fanout.aiStream(tenant, chatId, { chatId, streamId: s.id, done: true, messageId: m.id, seq: m.seq, handover });
        // The AI could not help: a human takes over from the queue.
        if (handover && (await this.chat(tenant, chatId))?.status === 'ai') await this.requeue(tenant, SYSTEM, chatId);
        return { messageId: m.id, seq: m.seq };
      },
    );
    return s;
  }

  /** A draft reply for the agent, streamed as chat-stream to the agent's sockets only; nothing stored. */
  async assist(tenant: string, agent: Participant, chatId: string, prompt?: string): Promise<AiStream> {
    const chat = await this.chat(tenant, chatId);
    if (!chat) throw appError('ERR_NOT_FOUND', 'chat');
    const s = this.streams.create(chatId, 'assist', { tenant, customerId: null, staffOnly: true });
    const messages = this.onOwner.history(tenant, chatId).then((m) => (prompt ? [...m, { role: 'user' as const, content: prompt }] : m));
    void this.run(
      tenant,
      s,
      messages,
      (index, c) => {
        if (index < 0) this.fanout.assistStream(tenant, agent.id, { chatId, streamId: s.id, done: true, error: s.end?.error });
        else this.fanout.assistStream(tenant, agent.id, { chatId, streamId: s.id, index, chunk: c, done: false });
      },
      async (text) => {
        this.fanout.assistStream(tenant, agent.id, { chatId, streamId: s.id, done: true, text });
        return {};
      },
    );
    return s;
  }
}
