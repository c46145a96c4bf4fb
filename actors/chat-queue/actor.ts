// The chat-queue actor, one per tenant (key `main`): the chats waiting for an agent, oldest first.
// Its state is derived, never stored on its own: on activation it is rebuilt from the chat records
// whose status is `queued`, so the queue and the chats cannot disagree after a restart. The chat's
// own actor stays the authority: pick-next takes the oldest entry here (one message at a time, so
// two agents never take the same one) and then asks that chat to accept the agent, which it only
// does while the chat is still queued.
import type { ActorKind, ActivationContext } from '../../core/actor/runtime.js';
import { CHAT_DATATYPE, type ChatData } from '../chat-room/index.js';
import { CHAT_QUEUE_ACTOR, type QueueEntry, type QueueMsg, type QueueReply, type QueueView } from './messages.js';

export interface QueueState {
  entries: QueueEntry[];
}

export function entryFromChat(d: ChatData, queuedAt: number): QueueEntry {
  return { chatId: d.chatId, queuedAt, department: d.department, customer: d.customer, subject: d.subject };
}

function views(s: QueueState): QueueView[] {
  return s.entries.map((e, i) => ({ ...e, position: i + 1 }));
}

function answer(s: QueueState, entry: QueueView | null, changed: boolean): QueueReply {
  return { entry, waiting: s.entries.length, entries: views(s), changed };
}

function insert(s: QueueState, e: QueueEntry): number {
  // Keep the order by queuedAt (a late enqueue after a retry still lands in its place).
  let i = s.entries.length;
  while (i > 0 && s.entries[i - 1].queuedAt > e.queuedAt) i--;
  s.entries.splice(i, 0, e);
  return i;
}

export const chatQueueActor: ActorKind<QueueState, QueueMsg, QueueReply> = {
  kind: CHAT_QUEUE_ACTOR,

  activate(ctx: ActivationContext): QueueState {
    const entries = ctx.store
      .scan(ctx.tenant, CHAT_DATATYPE, { 'data.status': 'queued' })
      .map((r) => {
        const d = r.data as ChatData;
        return entryFromChat(d, Date.parse(d.queuedAt ?? r.modifydate));
      })
      .sort((a, b) => a.queuedAt - b.queuedAt || (a.chatId < b.chatId ? -1 : 1));
    return { entries };
  },

  receive(s, msg): QueueReply {
    switch (msg.type) {
      case 'enqueue': {
        const at = s.entries.findIndex((e) => e.chatId === msg.entry.chatId);
        if (at >= 0) return answer(s, { ...s.entries[at], position: at + 1 }, false);
        const i = insert(s, msg.entry);
        return answer(s, { ...msg.entry, position: i + 1 }, true);
      }
      case 'remove': {
        const at = s.entries.findIndex((e) => e.chatId === msg.chatId);
        if (at < 0) return answer(s, null, false);
        const [e] = s.entries.splice(at, 1);
        return answer(s, { ...e, position: at + 1 }, true);
      }
      case 'pick': {
        const dept = msg.department ?? null;
        const at = dept === null ? (s.entries.length > 0 ? 0 : -1) : s.entries.findIndex((e) => e.department === dept);
        if (at < 0) return answer(s, null, false);
        const [e] = s.entries.splice(at, 1);
        return answer(s, { ...e, position: at + 1 }, true);
      }
      case 'list':
        return answer(s, null, false);
      case 'position': {
        const at = s.entries.findIndex((e) => e.chatId === msg.chatId);
        return answer(s, at < 0 ? null : { ...s.entries[at], position: at + 1 }, false);
      }
    }
  },
};
