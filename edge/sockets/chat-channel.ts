// The /chat channel: support chat between customers, agents and the AI (spec: Events → /chat).
//
// On connect the server opens (or resumes) the caller's chat session, subscribes the socket to
// its audiences, emits `authenticate {chatSessionId, chatId, ...}` and then replays every message
// after the `lastSeq` the client sent: socket.io alone is at-most-once, this channel is not
// (clients dedupe by seq). Handlers wait for that set-up, so an early event is never lost.
import type { Socket } from 'socket.io';
import type { SessionMsg, SessionReply } from '../../actors/chat-room/session.js';
import { CHAT_DATATYPE, chatLog, type ChatMessage, type Participant } from '../../actors/chat-room/types.js';
import { appError } from '../../core/errors.js';
import { isId, newId } from '../../core/ids.js';
import type { ChatFeature } from './chat-feature.js';
import { SUPERVISOR_ROLES } from './chat-service.js';
import { bindEvents, type EventSpec } from './events.js';
import { handshake, logDisconnect, type SocketData, type SocketUser } from './handshake.js';
import { presenceUser } from './presence-service.js';
import { NS_CHAT } from './realtime.js';
import { ChatHandshake, chatEvents, compileAll, compilePayload } from './schemas.js';
import { chatTopic } from './topics.js';

export interface ChatSocketState {
  sessionId: string | null;
  chatId: string | null;
  lastActivity: number;
  warned: boolean;
  timers: NodeJS.Timeout[];
  clearTimers(): void;
}

export function participant(u: SocketUser, name?: string): Participant {
  const p: Participant = { id: u.userId, role: u.role };
  const n = name ?? u.name;
  if (n) p.name = n;
  if (u.email) p.email = u.email;
  return p;
}

export function chatChannel(f: ChatFeature): void {
  const { deps, rt, chat: svc, presence } = f;
  const cfg = deps.config.chat;
  const validators = compileAll(chatEvents(cfg.maxMessageLength, cfg.maxMetadataBytes));
  const nsp = rt.io!.of(NS_CHAT);
  nsp.use(handshake(deps, compilePayload(ChatHandshake)));

  const sessionAsk = (tenant: string, id: string, msg: SessionMsg) => deps.runtime.ask<SessionReply>(tenant, 'chat-session', id, msg);

  nsp.on('connection', (socket: Socket) => {
    const { user, auth } = socket.data as SocketData & { auth: ChatHandshake };
    const tenant = user.tenant;
    const now = () => deps.clock.now();
    const state: ChatSocketState = {
      sessionId: null,
      chatId: null,
      lastActivity: now(),
      warned: false,
      timers: [],
      clearTimers() {
        for (const t of this.timers) clearTimeout(t);
        this.timers = [];
      },
    };
    // The spec's handshake names the widget by `chatId` (as GET /chat/config/:chatId does); server
    // ids are 24-hex, so any other chatId is a widget, and a 24-hex one a conversation to resume.
    // A 24-hex id that names no chat at all may still be a widget's (see connect).
    const conversationId = auth.chatId !== undefined && isId(auth.chatId) ? auth.chatId : undefined;
    let widgetKey = auth.widgetId ?? (conversationId === undefined ? auth.chatId : undefined);
    const userTopic = chatTopic.user(tenant, user.userId);
    const socketId = `${deps.config.nodeId}:${socket.id}`;
    const isAgent = user.role === 'agent';

    /**
     * Sends the messages of `chatId` after `afterSeq` to this socket, in order, at most `budget`
     * of them; answers how many it sent. One connect shares one budget (`cfg.replayLimit`) over
     * every chat it names, so a handshake naming many chats reads and sends no more than one
     * naming a single busy chat.
     */
    const replay = (chatId: string, afterSeq: number, budget: number): number => {
      const entries = deps.store.readLog<ChatMessage>(tenant, chatLog(chatId), afterSeq + 1, budget + 1);
      const sent = Math.min(budget, entries.length);
      for (let i = 0; i < sent; i++) socket.emit('message', entries[i].entry);
      if (entries.length > sent) {
        // Too much to push: the client pages the rest with getMessages.
        socket.emit('update', { chatId, type: 'replay-truncated', nextAfterSeq: sent > 0 ? entries[sent - 1].seq : afterSeq });
      }
      return sent;
    };

    const openSession = async (chatId: string | null): Promise<SessionReply> => {
      const base = { userId: user.userId, kind: isAgent ? ('staff' as const) : ('customer' as const), email: user.email, widgetId: widgetKey ?? null };
      if (auth.chatSessionId) {
        const r = await sessionAsk(tenant, auth.chatSessionId, { type: 'open', ...base, chatId });
        if (r.ok) return r;
      }
      return sessionAsk(tenant, newId(now()), { type: 'open', ...base, chatId: chatId ?? (isAgent ? null : newId(now())) });
    };

    /** Moves a customer whose chat is closed (or missing) to a fresh chat id. */
    const useChat = async (chatId: string) => {
      if (state.chatId) rt.leave(socket, chatTopic.chat(tenant, state.chatId));
      state.chatId = chatId;
      rt.join(socket, chatTopic.chat(tenant, chatId));
      if (state.sessionId && (await sessionAsk(tenant, state.sessionId, { type: 'set-chat', userId: user.userId, chatId })).ok === false) {
        throw appError('ERR_CONFLICT', 'the chat session has expired');
      }
    };

    const connect = async () => {
      if (!isAgent) {
        let requested: string | null = null;
        if (conversationId !== undefined) {
          // Only an existing chat of this customer: chat ids are issued by the server, never claimed.
          const c = svc.chat(tenant, conversationId);
          if (c && c.customer.id === user.userId) requested = conversationId;
          else if (!c) widgetKey ??= conversationId;
          else if (c) socket.emit('error', { event: 'connect', statusCode: 404, message: 'chat not found', error: 'Not Found' });
        }
        const s = await openSession(requested);
        if (!socket.connected) return;
        state.sessionId = s.session!.sessionId;
        let chatId = s.session!.chatId ?? newId(now());
        if (svc.chat(tenant, chatId)?.status === 'closed' && chatId !== requested) chatId = newId(now());
        state.chatId = chatId;
        if (chatId !== s.session!.chatId) await sessionAsk(tenant, state.sessionId, { type: 'set-chat', userId: user.userId, chatId });
        if (!socket.connected) return;
        rt.addUserSocket(userTopic, socket);
        rt.join(socket, chatTopic.chat(tenant, chatId));
        const chat = svc.chat(tenant, chatId) ?? null;
        const widget = svc.config(tenant, widgetKey ?? chatId);
        socket.emit('authenticate', {
          chatSessionId: state.sessionId,
          chatId,
          userId: user.userId,
          role: 'customer',
          resumed: s.resumed,
          chat,
          lastSeq: deps.store.lastLogSeq(tenant, chatLog(chatId)),
          config: widget,
        });
        if (auth.lastSeq !== undefined && chat) replay(chatId, auth.lastSeq, cfg.replayLimit);
        f.customerSockets.set(socket, state);
      } else {
        const s = await openSession(null);
        if (!socket.connected) return;
        state.sessionId = s.session!.sessionId;
        rt.addUserSocket(userTopic, socket);
        rt.join(socket, chatTopic.staff(tenant));
        const mine = deps.store.scan(tenant, CHAT_DATATYPE, { 'data.agentId': user.userId, 'data.status': 'assigned' }).map((r) => r.sk);
        for (const id of mine) rt.join(socket, chatTopic.chat(tenant, id));
        const q = await svc.queue(tenant, { type: 'list' });
        if (!socket.connected) return;
        socket.emit('authenticate', {
          chatSessionId: state.sessionId,
          chatId: null,
          userId: user.userId,
          role: 'agent',
          resumed: s.resumed,
          chats: mine,
          queue: { waiting: q.waiting },
        });
        let budget = cfg.replayLimit;
        for (const [chatId, seq] of Object.entries(auth.lastSeqs ?? {})) if (svc.chat(tenant, chatId)) budget -= replay(chatId, seq, budget);
      }
      // token_expired when the handshake token runs out, then a short grace to reconnect.
      const exp = user.principal.exp;
      if (exp) {
        const t = setTimeout(() => {
          socket.emit('token_expired', { expiredAt: new Date(exp * 1000).toISOString(), disconnectInMs: cfg.tokenExpiryGraceMs });
          const d = setTimeout(() => socket.disconnect(true), cfg.tokenExpiryGraceMs);
          d.unref();
          state.timers.push(d);
        }, Math.max(0, exp * 1000 - now()));
        t.unref();
        state.timers.push(t);
      }
      await presence.connect(tenant, presenceUser(user), socketId);
    };

    const ready = connect().catch((err: unknown) => {
      deps.logger.error({ err, tenant }, 'chat connection set-up failed');
      socket.emit('error', { event: 'connect', statusCode: 503, message: 'the chat could not be set up; reconnect', error: 'Service Unavailable' });
      socket.disconnect(true);
      throw err;
    });
    ready.catch(() => undefined);

    socket.on('disconnect', (reason: string) => {
      logDisconnect(socket, reason, deps.logger);
      state.clearTimers();
      f.customerSockets.delete(socket);
      rt.removeUserSocket(userTopic, socket);
      void ready
        .then(() => presence.disconnect(tenant, presenceUser(user), socketId))
        .catch(() => undefined);
    });

    const me = (name?: string) => participant(user, name);
    /** The chat an event is about: the one named, else the customer's own. */
    const target = (chatId: string | undefined): string => {
      const id = chatId ?? (isAgent ? undefined : state.chatId ?? undefined);
      if (!id) throw appError('ERR_VALIDATION', 'payload/chatId is required');
      return id;
    };
    /** A customer may only touch their own chats (a chat not created yet is their session's). */
    const readable = (chatId: string) => {
      if (isAgent) {
        if (!svc.chat(tenant, chatId)) throw appError('ERR_NOT_FOUND', 'chat');
        return;
      }
      const c = svc.chat(tenant, chatId);
      if (c ? c.customer.id !== user.userId : chatId !== state.chatId) throw appError('ERR_NOT_FOUND', 'chat');
    };

    const send: EventSpec = {
      handler: async (p: { chatId?: string; text: string; clientId?: string; metadata?: Record<string, unknown> }) => {
        // Stored with the message and sent with it on every replay and page: bounded like its text.
        if (p.metadata !== undefined) {
          const bytes = Buffer.byteLength(JSON.stringify(p.metadata));
          if (bytes > cfg.maxMetadataBytes) throw appError('ERR_VALIDATION', `payload/metadata is ${bytes} bytes of JSON; at most ${cfg.maxMetadataBytes} (CHAT_MAX_METADATA_BYTES)`);
        }
        const chatId = target(p.chatId);
        const open =
          !isAgent && chatId === state.chatId
            ? { customer: me(), widgetId: widgetKey ?? null, sessionId: state.sessionId, ai: svc.config(tenant, widgetKey ?? chatId).aiEnabled }
            : undefined;
        const m = await svc.send(tenant, me(), { chatId, text: p.text, clientId: p.clientId, metadata: p.metadata }, open, socket);
        return { id: m.id, seq: m.seq, chatId: m.chatId, at: m.at };
      },
    };

    const events: Record<string, EventSpec> = {
      sendMessage: send,
      'chat-message': send,

      chatRequest: {
        customerOnly: true,
        handler: async (p: { chatId?: string; department?: string; subject?: string; message?: string; name?: string }) => {
          let chatId = target(p.chatId);
          readable(chatId);
          if (svc.chat(tenant, chatId)?.status === 'closed') {
            // A closed chat stays closed: the request opens a new one in this session.
            chatId = newId(now());
            await useChat(chatId);
          }
          const r = await svc.request(tenant, me(p.name), {
            chatId,
            department: p.department ?? null,
            subject: p.subject ?? null,
            widgetId: widgetKey ?? null,
            sessionId: state.sessionId,
          });
          if (p.message) await svc.send(tenant, me(p.name), { chatId, text: p.message });
          return r;
        },
      },

      updateMessageStatus: {
        handler: async (p: { chatId: string; seq: number; status: 'delivered' | 'read'; messageId?: string }) => {
          readable(p.chatId);
          return svc.receipt(tenant, me(), p.chatId, p.seq, p.status, p.messageId);
        },
      },

      shareStatus: {
        handler: (p: { chatId?: string; status: string; page?: string }) => {
          const chatId = target(p.chatId);
          readable(chatId);
          const event = { chatId, type: 'participant-status', from: me(), status: p.status, page: p.page ?? null, at: new Date(now()).toISOString() };
          rt.emit(tenant, [chatTopic.chat(tenant, chatId)], 'update', event);
          return event;
        },
      },

      getMessages: {
        handler: (p: { chatId?: string; afterSeq?: number; beforeSeq?: number; limit?: number }) => {
          const chatId = target(p.chatId);
          readable(chatId);
          const page = svc.chat(tenant, chatId)
            ? svc.messages(tenant, chatId, p)
            : { chatId, messages: [], hasMore: false, lastSeq: 0 };
          socket.emit('messages', page);
          return page;
        },
      },

      'set-status': {
        agentOnly: true,
        handler: async (p: { status: 'online' | 'away' | 'busy' | 'offline' }) => {
          const r = await presence.setStatus(tenant, presenceUser(user), p.status, false);
          return r.user;
        },
      },

      'pick-next': {
        agentOnly: true,
        handler: async (p: { department?: string }) => ({ chat: await svc.pickNext(tenant, me(), p.department ?? null) }),
      },

      'transfer-chat': {
        agentOnly: true,
        handler: async (p: { chatId: string; toAgent?: string; department?: string; note?: string }) => {
          const supervisor = user.principal.roles.some((r) => SUPERVISOR_ROLES.includes(r));
          return { chat: await svc.transfer(tenant, me(), p, supervisor) };
        },
      },

      'close-chat': {
        handler: async (p: { chatId?: string; reason?: string }) => {
          const chatId = target(p.chatId);
          readable(chatId);
          const chat = await svc.close(tenant, me(), chatId, p.reason ?? null);
          return { chatId, status: chat.status, closedAt: chat.closedAt };
        },
      },

      'takeover-chat': {
        agentOnly: true,
        handler: async (p: { chatId: string }) => ({ chat: await svc.takeover(tenant, me(), p.chatId) }),
      },

      'resume-ai': {
        agentOnly: true,
        handler: async (p: { chatId: string }) => ({ chat: await svc.resumeAi(tenant, me(), p.chatId) }),
      },

      'assist-ai': {
        agentOnly: true,
        handler: (p: { chatId: string; prompt?: string }) => {
          const s = svc.assist(tenant, me(), p.chatId, p.prompt);
          return { chatId: p.chatId, streamId: s.id };
        },
      },

      'join-chat': {
        agentOnly: true,
        handler: (p: { chatId: string }) => {
          const chat = svc.chat(tenant, p.chatId);
          if (!chat) throw appError('ERR_NOT_FOUND', 'chat');
          rt.join(socket, chatTopic.chat(tenant, p.chatId));
          return { chatId: p.chatId, chat, lastSeq: deps.store.lastLogSeq(tenant, chatLog(p.chatId)) };
        },
      },

      'leave-chat': {
        agentOnly: true,
        handler: (p: { chatId: string }) => {
          rt.leave(socket, chatTopic.chat(tenant, p.chatId));
          return { chatId: p.chatId, left: true };
        },
      },
    };

    bindEvents(socket, {
      user,
      validators,
      events,
      ready,
      logger: deps.logger,
      documentLimits: deps.config.documents,
      charge: () => f.chargeEvent(tenant, user.principal),
      onActivity: () => {
        state.lastActivity = now();
        state.warned = false;
      },
    });
  });
}

/** Idle customer sessions: session-expiring, then session-expired and a disconnect. */
export function sweepChatSockets(f: ChatFeature, now: number): void {
  const { customerIdleMs, sessionWarningMs } = f.deps.config.chat;
  for (const [socket, state] of f.customerSockets) {
    const idle = now - state.lastActivity;
    if (idle >= customerIdleMs) {
      f.customerSockets.delete(socket);
      const { user } = socket.data as SocketData;
      socket.emit('session-expired', { chatSessionId: state.sessionId, chatId: state.chatId, at: new Date(now).toISOString() });
      if (state.sessionId) {
        void f.deps.runtime
          .ask(user.tenant, 'chat-session', state.sessionId, { type: 'expire', userId: user.userId } satisfies SessionMsg)
          .catch(() => undefined);
      }
      socket.disconnect(true);
    } else if (!state.warned && idle >= customerIdleMs - sessionWarningMs) {
      state.warned = true;
      const expiresAt = state.lastActivity + customerIdleMs;
      socket.emit('session-expiring', {
        chatSessionId: state.sessionId,
        chatId: state.chatId,
        expiresAt: new Date(expiresAt).toISOString(),
        secondsLeft: Math.max(0, Math.round((expiresAt - now) / 1000)),
      });
    }
  }
}
