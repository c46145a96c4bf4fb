// The rules of a support-chat connection: which chat session and which chat a connecting customer
// gets (chat ids are issued by the server, never claimed), the chats an agent's connection
// follows, what a reconnect replays, who may touch which chat, and the end of an idle session.
// The edge's /chat channel carries these over the socket; the decisions are here.
import type { ActorRuntime } from '../../core/actor/runtime.js';
import type { Clock } from '../../core/clock.js';
import type { OnOwner, OwnerReads } from '../../core/cluster/owner-reads-actor.js';
import { appError } from '../../core/errors.js';
import { isId, newId } from '../../core/ids.js';
import type { Store } from '../../core/store/store.js';
import {
  CHAT_DATATYPE,
  CHAT_SESSION_ACTOR,
  chatLog,
  type ChatData,
  type ChatMessage,
  type Participant,
  type SessionMsg,
  type SessionReply,
} from '../chat-room/index.js';
import type { ChatService, MessagePage, WidgetConfig } from './chat-service.js';
import type { Origin } from './ports.js';
import { isSupervisor } from './roles.js';

/** Who is connected, as the chat rules need them. */
export interface ChatUser {
  userId: string;
  /** Staff tokens act as agents; everyone else as a customer. */
  role: 'agent' | 'customer';
  email: string | null;
  name: string | null;
}

/** One connection's place in support chat: its session, its chat (customers), its widget. */
export interface ChatConnection {
  readonly tenant: string;
  readonly user: ChatUser;
  sessionId: string | null;
  /** A customer's current chat (agents: none). */
  chatId: string | null;
  /** The widget whose configuration applies. */
  widgetKey: string | undefined;
  /** Told when a customer's connection moves to a new chat (theirs was closed), before the session records it. */
  onChatChange?(from: string | null, to: string): void;
}

/** What the customer's connection is told once it is set up (read after it follows its chat). */
export interface CustomerWelcome {
  chat: ChatData | null;
  lastSeq: number;
  config: WidgetConfig & { source: string };
}

export interface AgentSession {
  resumed: boolean;
  /** The chats assigned to the agent: the connection follows them. */
  chats: string[];
}

/** Messages of one chat to send a reconnecting client, and where it must page on if it stopped. */
export interface Replay {
  messages: ChatMessage[];
  /** Set when there was more than the budget: page on with getMessages after this seq. */
  nextAfterSeq?: number;
}

export class ChatConnections {
  /** What a connection reads of its tenant, read on the node that serves it (owner-reads-actor.ts). */
  private readonly onOwner: {
    agentChats: OnOwner<string, string[]>;
    lastSeq: OnOwner<string, number>;
    replay: OnOwner<{ chatId: string; afterSeq: number; budget: number }, Replay>;
  };

  constructor(
    private readonly runtime: ActorRuntime,
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly chats: ChatService,
    reads: OwnerReads,
  ) {
    this.onOwner = {
      agentChats: reads.define('chat.agent-chats', (tenant, agentId: string) =>
        this.store.scan(tenant, CHAT_DATATYPE, { 'data.agentId': agentId, 'data.status': 'assigned' }).map((r) => r.sk),
      ),
      lastSeq: reads.define('chat.last-seq', (tenant, chatId: string) => this.store.lastLogSeq(tenant, chatLog(chatId))),
      replay: reads.define('chat.replay', (tenant, a: { chatId: string; afterSeq: number; budget: number }) => this.replayHere(tenant, a.chatId, a.afterSeq, a.budget)),
    };
  }

  private session(tenant: string, id: string, msg: SessionMsg): Promise<SessionReply> {
    return this.runtime.ask<SessionReply>(tenant, CHAT_SESSION_ACTOR, id, msg);
  }

  /**
   * A new connection. The handshake names the widget by `chatId` (as GET /chat/config/:chatId
   * does); server ids are 24-hex, so any other chatId is a widget, and a 24-hex one a
   * conversation to resume. A 24-hex id that names no chat at all may still be a widget's.
   */
  open(tenant: string, user: ChatUser, hs: { chatId?: string; widgetId?: string }): ChatConnection & { conversationId: string | undefined } {
    const conversationId = hs.chatId !== undefined && isId(hs.chatId) ? hs.chatId : undefined;
    return {
      tenant,
      user,
      sessionId: null,
      chatId: null,
      widgetKey: hs.widgetId ?? (conversationId === undefined ? hs.chatId : undefined),
      conversationId,
    };
  }

  private async openSession(c: ChatConnection, resumeId: string | undefined, chatId: string | null): Promise<SessionReply> {
    const { tenant, user } = c;
    const agent = user.role === 'agent';
    const base = { userId: user.userId, kind: agent ? ('staff' as const) : ('customer' as const), email: user.email, widgetId: c.widgetKey ?? null };
    if (resumeId) {
      const r = await this.session(tenant, resumeId, { type: 'open', ...base, chatId });
      if (r.ok) return r;
    }
    const now = this.clock.now();
    return this.session(tenant, newId(now), { type: 'open', ...base, chatId: chatId ?? (agent ? null : newId(now)) });
  }

  /**
   * The chat a customer's handshake names, when it is theirs: chat ids are issued by the server,
   * never claimed. `foreign`: it is someone else's (the client is told, and gets its own).
   */
  async claim(c: ChatConnection & { conversationId: string | undefined }): Promise<{ requested: string | null; foreign: boolean }> {
    if (c.conversationId === undefined) return { requested: null, foreign: false };
    const chat = await this.chats.chat(c.tenant, c.conversationId);
    if (chat && chat.customer.id === c.user.userId) return { requested: c.conversationId, foreign: false };
    if (!chat) c.widgetKey ??= c.conversationId;
    return { requested: null, foreign: !!chat };
  }

  /**
   * Sets up a customer's connection: the session (resumed when `resumeId` is still theirs) and
   * its chat: `requested` (see claim), else the session's, else a new one; a closed chat stays
   * closed and gives way to a new one. Answers undefined when `live()` turns false meanwhile.
   */
  async connectCustomer(c: ChatConnection, requested: string | null, resumeId: string | undefined, live: () => boolean): Promise<{ chatId: string; resumed: boolean } | undefined> {
    const { tenant, user } = c;
    const s = await this.openSession(c, resumeId, requested);
    if (!live()) return undefined;
    c.sessionId = s.session!.sessionId;
    let chatId = s.session!.chatId ?? newId(this.clock.now());
    if ((await this.chats.chat(tenant, chatId))?.status === 'closed' && chatId !== requested) chatId = newId(this.clock.now());
    c.chatId = chatId;
    if (chatId !== s.session!.chatId) await this.session(tenant, c.sessionId, { type: 'set-chat', userId: user.userId, chatId });
    if (!live()) return undefined;
    return { chatId, resumed: s.resumed };
  }

  /** The customer's chat as it stands, the latest seq, the widget configuration. */
  async welcome(c: ChatConnection, chatId: string): Promise<CustomerWelcome> {
    const [chat, lastSeq, config] = await Promise.all([this.chats.chat(c.tenant, chatId), this.lastSeq(c.tenant, chatId), this.chats.config(c.tenant, c.widgetKey ?? chatId)]);
    return { chat: chat ?? null, lastSeq, config };
  }

  /** Sets up an agent's connection: the session and the chats assigned to them. */
  async connectAgent(c: ChatConnection, resumeId: string | undefined, live: () => boolean): Promise<AgentSession | undefined> {
    const s = await this.openSession(c, resumeId, null);
    if (!live()) return undefined;
    c.sessionId = s.session!.sessionId;
    const chats = await this.onOwner.agentChats(c.tenant, c.user.userId);
    if (!live()) return undefined;
    return { resumed: s.resumed, chats };
  }

  /** How many chats wait for an agent. */
  async waiting(tenant: string): Promise<number> {
    return (await this.chats.queue(tenant, { type: 'list' })).waiting;
  }

  lastSeq(tenant: string, chatId: string): Promise<number> {
    return this.onOwner.lastSeq(tenant, chatId);
  }

  /**
   * The messages of `chatId` after `afterSeq`, at most `budget` of them. One connect shares one
   * budget (`chat.replayLimit`) over every chat it names, so a handshake naming many chats reads
   * and sends no more than one naming a single busy chat. A chat that does not exist replays nothing.
   */
  replay(tenant: string, chatId: string, afterSeq: number, budget: number): Promise<Replay> {
    return this.onOwner.replay(tenant, { chatId, afterSeq, budget });
  }

  private replayHere(tenant: string, chatId: string, afterSeq: number, budget: number): Replay {
    if (!this.store.getRecord(tenant, CHAT_DATATYPE, chatId)) return { messages: [] };
    const entries = this.store.readLog<ChatMessage>(tenant, chatLog(chatId), afterSeq + 1, budget + 1);
    const sent = Math.min(budget, entries.length);
    const messages = entries.slice(0, sent).map((e) => e.entry);
    // Too much to push: the client pages the rest with getMessages.
    if (entries.length > sent) return { messages, nextAfterSeq: sent > 0 ? entries[sent - 1].seq : afterSeq };
    return { messages };
  }

  /** Moves a customer whose chat is closed (or missing) to a fresh chat id. */
  async useChat(c: ChatConnection, chatId: string): Promise<void> {
    const from = c.chatId;
    c.chatId = chatId;
    c.onChatChange?.(from, chatId);
    if (c.sessionId && (await this.session(c.tenant, c.sessionId, { type: 'set-chat', userId: c.user.userId, chatId })).ok === false) {
      throw appError('ERR_CONFLICT', 'the chat session has expired');
    }
  }

  /** The idle customer's session ends (the connection is closed by the edge). */
  expire(c: ChatConnection): Promise<unknown> {
    if (!c.sessionId) return Promise.resolve();
    return this.session(c.tenant, c.sessionId, { type: 'expire', userId: c.user.userId });
  }

  me(c: ChatConnection, name?: string): Participant {
    const p: Participant = { id: c.user.userId, role: c.user.role };
    const n = name ?? c.user.name;
    if (n) p.name = n;
    if (c.user.email) p.email = c.user.email;
    return p;
  }

  /** The chat an event is about: the one named, else the customer's own. */
  target(c: ChatConnection, chatId: string | undefined): string {
    const id = chatId ?? (c.user.role === 'agent' ? undefined : c.chatId ?? undefined);
    if (!id) throw appError('ERR_VALIDATION', 'payload/chatId is required');
    return id;
  }

  /** A customer may only touch their own chats (a chat not created yet is their session's); an agent any existing one. */
  async assertReadable(c: ChatConnection, chatId: string): Promise<void> {
    const chat = await this.chats.chat(c.tenant, chatId);
    if (c.user.role === 'agent') {
      if (!chat) throw appError('ERR_NOT_FOUND', 'chat');
      return;
    }
    if (chat ? chat.customer.id !== c.user.userId : chatId !== c.chatId) throw appError('ERR_NOT_FOUND', 'chat');
  }

  /** A message from this connection: a customer's first message in their own chat opens it. */
  async send(c: ChatConnection, p: { chatId?: string; text: string; clientId?: string; metadata?: Record<string, unknown> }, origin: Origin): Promise<ChatMessage> {
    const chatId = this.target(c, p.chatId);
    const open =
      c.user.role !== 'agent' && chatId === c.chatId
        ? { customer: this.me(c), widgetId: c.widgetKey ?? null, sessionId: c.sessionId, ai: (await this.chats.config(c.tenant, c.widgetKey ?? chatId)).aiEnabled }
        : undefined;
    return this.chats.send(c.tenant, this.me(c), { chatId, text: p.text, clientId: p.clientId, metadata: p.metadata }, open, origin);
  }

  /** A customer asks for an agent (a closed chat stays closed: the request opens a new one). */
  async request(c: ChatConnection, p: { chatId?: string; department?: string; subject?: string; message?: string; name?: string }) {
    let chatId = this.target(c, p.chatId);
    await this.assertReadable(c, chatId);
    if ((await this.chats.chat(c.tenant, chatId))?.status === 'closed') {
      chatId = newId(this.clock.now());
      await this.useChat(c, chatId);
    }
    const me = this.me(c, p.name);
    const r = await this.chats.request(c.tenant, me, {
      chatId,
      department: p.department ?? null,
      subject: p.subject ?? null,
      widgetId: c.widgetKey ?? null,
      sessionId: c.sessionId,
    });
    if (p.message) await this.chats.send(c.tenant, me, { chatId, text: p.message });
    return r;
  }

  /** A participant's typing, idle or page, to everyone in the chat. */
  async shareStatus(c: ChatConnection, p: { chatId?: string; status: string; page?: string }) {
    const chatId = this.target(c, p.chatId);
    await this.assertReadable(c, chatId);
    return this.chats.shareStatus(c.tenant, this.me(c), chatId, p.status, p.page ?? null);
  }

  /** A page of messages; a chat of the session not created yet is an empty one. */
  async messages(c: ChatConnection, p: { chatId?: string; afterSeq?: number; beforeSeq?: number; limit?: number }): Promise<MessagePage> {
    const chatId = this.target(c, p.chatId);
    await this.assertReadable(c, chatId);
    return (await this.chats.chat(c.tenant, chatId)) ? this.chats.messages(c.tenant, chatId, p) : { chatId, messages: [], hasMore: false, lastSeq: 0 };
  }

  async receipt(c: ChatConnection, p: { chatId: string; seq: number; status: 'delivered' | 'read'; messageId?: string }) {
    await this.assertReadable(c, p.chatId);
    return this.chats.receipt(c.tenant, this.me(c), p.chatId, p.seq, p.status, p.messageId);
  }

  async close(c: ChatConnection, p: { chatId?: string; reason?: string }) {
    const chatId = this.target(c, p.chatId);
    await this.assertReadable(c, chatId);
    const chat = await this.chats.close(c.tenant, this.me(c), chatId, p.reason ?? null);
    return { chatId, status: chat.status, closedAt: chat.closedAt };
  }

  /** An agent hands a chat to another agent or back to the queue; a supervisor may move anyone's. */
  async transfer(c: ChatConnection, roles: readonly string[], p: { chatId: string; toAgent?: string; department?: string; note?: string }): Promise<{ chat: ChatData }> {
    return { chat: await this.chats.transfer(c.tenant, this.me(c), p, isSupervisor(roles)) };
  }

  /** The chat an agent is about to watch without taking it. */
  async watch(c: ChatConnection, chatId: string): Promise<ChatData> {
    const chat = await this.chats.chat(c.tenant, chatId);
    if (!chat) throw appError('ERR_NOT_FOUND', 'chat');
    return chat;
  }
}
