// The chat-session actor, one per server-issued chatSessionId. A session binds one signed-in user
// to the chat they are in; a client that reconnects with its chatSessionId resumes it (same
// chat), as long as the session is its own and has not expired. An email alone never identifies
// a session (spec: Events → /chat rules).
import type { ActorKind, ActivationContext } from '../../core/actor/runtime.js';
import { newRecord, nextVersion, type StoredRecord } from '../../core/store/record.js';
import { CHAT_SESSION_DATATYPE } from './types.js';
import { CHAT_SESSION_ACTOR, type ChatSessionData, type SessionMsg, type SessionReply } from './messages.js';

export interface SessionState {
  rec: StoredRecord<ChatSessionData> | undefined;
}

export const chatSessionActor: ActorKind<SessionState, SessionMsg, SessionReply> = {
  kind: CHAT_SESSION_ACTOR,

  activate(ctx: ActivationContext): SessionState {
    return { rec: ctx.store.getRecord(ctx.tenant, CHAT_SESSION_DATATYPE, ctx.key) as StoredRecord<ChatSessionData> | undefined };
  },

  receive(s, msg, ctx): SessionReply {
    const now = ctx.clock.now();
    const at = new Date(now).toISOString();
    const write = (data: ChatSessionData) => {
      const next = s.rec
        ? nextVersion(s.rec, { data, state: data.status }, now)
        : newRecord(ctx.tenant, CHAT_SESSION_DATATYPE, data, { sk: ctx.key, state: data.status, now });
      ctx.batch.putRecord(next, s.rec?.version ?? 0);
      s.rec = next;
    };
    const own = s.rec && s.rec.data.userId === msg.userId && s.rec.data.status === 'active';
    switch (msg.type) {
      case 'open': {
        if (s.rec && !own) return { ok: false, resumed: false, session: null };
        const resumed = !!s.rec;
        const prev = s.rec?.data;
        write({
          sessionId: ctx.key,
          userId: msg.userId,
          kind: msg.kind,
          email: msg.email,
          chatId: msg.chatId ?? prev?.chatId ?? null,
          widgetId: msg.widgetId ?? prev?.widgetId ?? null,
          status: 'active',
          lastSeenAt: at,
          expiredAt: null,
        });
        return { ok: true, resumed, session: s.rec!.data };
      }
      case 'set-chat':
        if (!own) return { ok: false, resumed: false, session: null };
        if (s.rec!.data.chatId !== msg.chatId) write({ ...s.rec!.data, chatId: msg.chatId, lastSeenAt: at });
        return { ok: true, resumed: true, session: s.rec!.data };
      case 'expire':
        if (!own) return { ok: false, resumed: false, session: null };
        write({ ...s.rec!.data, status: 'expired', expiredAt: at });
        return { ok: true, resumed: false, session: s.rec!.data };
    }
  },
};
