// The /chat channel: support chat between customers, agents and the AI (spec: Events → /chat).
//
// On connect the chat area opens (or resumes) the caller's chat session and chat; the channel
// subscribes the socket to its audiences, emits `authenticate {chatSessionId, chatId, ...}` and
// then replays every message after the `lastSeq` the client sent: socket.io alone is
// at-most-once, this channel is not (clients dedupe by seq). Handlers wait for that set-up, so an
// early event is never lost. The events themselves are chat-events.ts.
import type { Socket } from 'socket.io';
import { presenceUser } from '../../actors/chat/index.js';
import type { ChannelHost, ChatSocketState } from './channel-host.js';
import { chatEvents, type ChatConn } from './chat-events.js';
import { bindEvents, compileEvents } from './events.js';
import { handshake, logDisconnect, type SocketData } from './handshake.js';
import { NS_CHAT } from './realtime.js';
import { ChatHandshake, compilePayload } from './schemas.js';
import { chatTopic } from './topics.js';

export function chatChannel(f: ChannelHost): void {
  const { deps, rt, api } = f;
  const { connections, presence } = api;
  const cfg = deps.config.chat;
  const events = compileEvents(chatEvents(cfg), deps.config.http.compileAtStart);
  const nsp = rt.io!.of(NS_CHAT);
  nsp.use(handshake(deps, f.orgs, compilePayload(ChatHandshake)));

  nsp.on('connection', (socket: Socket) => {
    const { user, auth } = socket.data as SocketData & { auth: ChatHandshake };
    const tenant = user.tenant;
    const now = () => deps.clock.now();
    const chat = connections.open(tenant, user, auth);
    const state: ChatSocketState = {
      chat,
      lastActivity: now(),
      warned: false,
      timers: [],
      clearTimers() {
        for (const t of this.timers) clearTimeout(t);
        this.timers = [];
      },
    };
    // A customer moved to a new chat (theirs was closed): the socket follows it.
    chat.onChatChange = (from, to) => {
      if (from) rt.leave(socket, chatTopic.chat(tenant, from));
      rt.join(socket, chatTopic.chat(tenant, to));
    };
    const userTopic = chatTopic.user(tenant, user.userId);
    const socketId = `${deps.config.nodeId}:${socket.id}`;
    const live = () => socket.connected;

    /** Sends what `replay` found to this socket; answers how many messages it sent. */
    const replay = async (chatId: string, afterSeq: number, budget: number): Promise<number> => {
      const r = await connections.replay(tenant, chatId, afterSeq, budget);
      if (!socket.connected) return 0;
      for (const m of r.messages) socket.emit('message', m);
      if (r.nextAfterSeq !== undefined) socket.emit('update', { chatId, type: 'replay-truncated', nextAfterSeq: r.nextAfterSeq });
      return r.messages.length;
    };

    const connect = async () => {
      if (user.role !== 'agent') {
        const claim = await connections.claim(chat);
        if (claim.foreign) socket.emit('error', { event: 'connect', statusCode: 404, message: 'chat not found', error: 'Not Found' });
        const s = await connections.connectCustomer(chat, claim.requested, auth.chatSessionId, live);
        if (!s) return;
        rt.addUserSocket(userTopic, socket);
        rt.join(socket, chatTopic.chat(tenant, s.chatId));
        // Subscribed first, then read: a message sent meanwhile may come twice, never not at all.
        const w = await connections.welcome(chat, s.chatId);
        if (!socket.connected) return;
        socket.emit('authenticate', {
          chatSessionId: chat.sessionId,
          chatId: s.chatId,
          userId: user.userId,
          role: 'customer',
          resumed: s.resumed,
          chat: w.chat,
          lastSeq: w.lastSeq,
          config: w.config,
        });
        if (auth.lastSeq !== undefined && w.chat) await replay(s.chatId, auth.lastSeq, cfg.replayLimit);
        f.customerSockets.set(socket, state);
      } else {
        const w = await connections.connectAgent(chat, auth.chatSessionId, live);
        if (!w) return;
        rt.addUserSocket(userTopic, socket);
        rt.join(socket, chatTopic.staff(tenant));
        for (const id of w.chats) rt.join(socket, chatTopic.chat(tenant, id));
        const waiting = await connections.waiting(tenant);
        if (!socket.connected) return;
        socket.emit('authenticate', {
          chatSessionId: chat.sessionId,
          chatId: null,
          userId: user.userId,
          role: 'agent',
          resumed: w.resumed,
          chats: w.chats,
          queue: { waiting },
        });
        let budget = cfg.replayLimit;
        for (const [chatId, seq] of Object.entries(auth.lastSeqs ?? {})) budget -= await replay(chatId, seq, budget);
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

    const conn: ChatConn = { socket, user, chat, api, rt };
    bindEvents(socket, {
      user,
      events,
      conn,
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
export function sweepChatSockets(f: ChannelHost, now: number): void {
  const { customerIdleMs, sessionWarningMs } = f.deps.config.chat;
  for (const [socket, state] of f.customerSockets) {
    const idle = now - state.lastActivity;
    if (idle >= customerIdleMs) {
      f.customerSockets.delete(socket);
      socket.emit('session-expired', { chatSessionId: state.chat.sessionId, chatId: state.chat.chatId, at: new Date(now).toISOString() });
      void f.api.connections.expire(state.chat).catch(() => undefined);
      socket.disconnect(true);
    } else if (!state.warned && idle >= customerIdleMs - sessionWarningMs) {
      state.warned = true;
      const expiresAt = state.lastActivity + customerIdleMs;
      socket.emit('session-expiring', {
        chatSessionId: state.chat.sessionId,
        chatId: state.chat.chatId,
        expiresAt: new Date(expiresAt).toISOString(),
        secondsLeft: Math.max(0, Math.round((expiresAt - now) / 1000)),
      });
    }
  }
}
