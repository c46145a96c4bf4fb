// The chat-room actor, one per chat (key: chat id). It owns the chat record (status, customer,
// agent, receipts) and the chat's message log. Every message gets the next sequence number and is
// appended in the same batch that the runtime commits before the reply (the ack) is released, so
// an acked message is durable and a reconnecting client can ask for everything after the last seq
// it saw. One message at a time per chat: two agents can never both be assigned.
//
// Authorization lives here too (who may send, close, transfer), so every caller gets the same
// rules: the socket handlers and the REST routes.
import type { ActorContext, ActorKind, ActivationContext } from '../../core/actor/runtime.js';
import { appError } from '../../core/errors.js';
import { newId } from '../../core/ids.js';
import { newRecord, nextVersion, type StoredRecord } from '../../core/store/record.js';
import { queueEvent } from '../../core/webhooks/catalogue.js';
import { CHAT_DATATYPE, chatLog, emptyReceipts, type ChatData, type ChatStatus, type Participant } from './types.js';
import { CHAT_ROOM_ACTOR, type ChatMessage, type ChatRoomMsg, type ChatRoomReply, type OpenSpec } from './messages.js';

/** Client message ids remembered per chat, so a resent message is acked again, not stored twice. */
const CLIENT_IDS = 500;

export interface ChatRoomState {
  rec: StoredRecord<ChatData> | undefined;
  seq: number;
  clientIds: Map<string, ChatMessage>;
}

function iso(ctx: { clock: { now(): number } }): string {
  return new Date(ctx.clock.now()).toISOString();
}

function reply(s: ChatRoomState, previous: ChatStatus | null, changed: boolean, extra: Partial<ChatRoomReply> = {}): ChatRoomReply {
  return { chat: s.rec?.data ?? null, previous, changed, lastSeq: s.seq, ...extra };
}

function must(s: ChatRoomState): StoredRecord<ChatData> {
  if (!s.rec) throw appError('ERR_NOT_FOUND', 'chat');
  return s.rec;
}

function save(s: ChatRoomState, ctx: ActorContext, data: ChatData, state?: string): void {
  const now = ctx.clock.now();
  if (!s.rec) {
    const rec = newRecord(ctx.tenant, CHAT_DATATYPE, data, { sk: ctx.key, state: state ?? data.status, now });
    ctx.batch.putRecord(rec, 0);
    s.rec = rec;
    queueEvent(ctx.services.webhooks, ctx.batch, ctx.tenant, 'chat.conversation.created', rec, now);
    return;
  }
  const next = nextVersion(s.rec, { data, state: state ?? data.status }, now);
  ctx.batch.putRecord(next, s.rec.version);
  s.rec = next;
}

function create(ctx: ActorContext, status: ChatStatus, open: Omit<OpenSpec, 'ai'>, extra: Partial<ChatData> = {}): ChatData {
  const now = iso(ctx);
  return {
    chatId: ctx.key,
    status,
    customer: open.customer,
    customerEmail: open.customer.email?.toLowerCase() ?? null,
    agent: null,
    agentId: null,
    department: null,
    subject: null,
    widgetId: open.widgetId,
    sessionId: open.sessionId,
    queuedAt: status === 'queued' ? now : null,
    assignedAt: null,
    closedAt: null,
    closedBy: null,
    closeReason: null,
    receipts: emptyReceipts(),
    transfers: [],
    ...extra,
  };
}

function isCustomerOf(d: ChatData, p: Participant): boolean {
  return p.role === 'customer' && d.customer.id === p.id;
}

function notClosed(d: ChatData): void {
  if (d.status === 'closed') throw appError('ERR_CONFLICT', 'the chat is closed');
}

function remember(s: ChatRoomState, m: ChatMessage): void {
  if (!m.clientId) return;
  s.clientIds.set(m.clientId, m);
  if (s.clientIds.size > CLIENT_IDS) s.clientIds.delete(s.clientIds.keys().next().value as string);
}

function send(s: ChatRoomState, msg: Extract<ChatRoomMsg, { type: 'send' }>, ctx: ActorContext): ChatRoomReply {
  let previous: ChatStatus | null = s.rec?.data.status ?? null;
  let changed = false;
  if (!s.rec) {
    // A customer's first message opens the chat: with the AI when the widget has it on.
    if (!msg.open || msg.from.role !== 'customer') throw appError('ERR_NOT_FOUND', 'chat');
    save(s, ctx, create(ctx, msg.open.ai ? 'ai' : 'queued', msg.open));
    changed = true;
  }
  const d = s.rec!.data;
  notClosed(d);
  switch (msg.from.role) {
    case 'customer':
      if (!isCustomerOf(d, msg.from)) throw appError('ERR_NOT_FOUND', 'chat');
      break;
    case 'agent':
      if (d.agentId !== msg.from.id) throw appError('ERR_FORBIDDEN', 'only the agent assigned to the chat can send to it');
      break;
    default:
      break;
  }
  if (msg.clientId) {
    const seen = s.clientIds.get(msg.clientId);
    if (seen && seen.from.id === msg.from.id) return reply(s, previous, false, { message: seen, duplicate: true });
  }
  const seq = s.seq + 1;
  const m: ChatMessage = {
    id: newId(ctx.clock.now()),
    seq,
    chatId: ctx.key,
    from: msg.from,
    text: msg.text,
    type: msg.msgType ?? 'text',
    at: iso(ctx),
  };
  if (msg.clientId) m.clientId = msg.clientId;
  if (msg.metadata) m.metadata = msg.metadata;
  // Acknowledged under CHAT_DURABILITY (journaled unless this message also opened the chat).
  ctx.batch.journal().append(ctx.tenant, chatLog(ctx.key), seq, m);
  // Customers' messages only: what integrators act on (agents' and the AI's are the venue's own).
  if (msg.from.role === 'customer') queueEvent(ctx.services.webhooks, ctx.batch, ctx.tenant, 'chat.message.created', m, ctx.clock.now());
  s.seq = seq;
  remember(s, m);
  return reply(s, changed ? null : previous, changed, { message: m });
}

export const chatRoomActor: ActorKind<ChatRoomState, ChatRoomMsg, ChatRoomReply> = {
  kind: CHAT_ROOM_ACTOR,

  activate(ctx: ActivationContext): ChatRoomState {
    const rec = ctx.store.getRecord(ctx.tenant, CHAT_DATATYPE, ctx.key) as StoredRecord<ChatData> | undefined;
    const seq = ctx.store.lastLogSeq(ctx.tenant, chatLog(ctx.key));
    const s: ChatRoomState = { rec, seq, clientIds: new Map() };
    if (seq > 0) {
      for (const e of ctx.store.readLog<ChatMessage>(ctx.tenant, chatLog(ctx.key), Math.max(1, seq - CLIENT_IDS + 1))) remember(s, e.entry);
    }
    return s;
  },

  receive(s, msg, ctx): ChatRoomReply {
    switch (msg.type) {
      case 'get':
        return reply(s, s.rec?.data.status ?? null, false);

      case 'send':
        return send(s, msg, ctx);

      case 'request': {
        if (!s.rec) {
          const data = create(ctx, 'queued', { customer: msg.customer, widgetId: msg.widgetId ?? null, sessionId: msg.sessionId ?? null }, {
            department: msg.department ?? null,
            subject: msg.subject ?? null,
          });
          save(s, ctx, data);
          return reply(s, null, true);
        }
        const d = s.rec.data;
        if (!isCustomerOf(d, msg.customer)) throw appError('ERR_NOT_FOUND', 'chat');
        notClosed(d);
        if (d.status === 'queued' || d.status === 'assigned') return reply(s, d.status, false);
        save(s, ctx, { ...d, status: 'queued', queuedAt: iso(ctx), department: msg.department ?? d.department, subject: msg.subject ?? d.subject });
        return reply(s, d.status, true);
      }

      case 'assign': {
        const d = must(s).data;
        if (!msg.from.includes(d.status)) {
          throw appError('ERR_CONFLICT', d.status === 'assigned' ? 'the chat already has an agent' : `the chat is ${d.status}`);
        }
        save(s, ctx, { ...d, status: 'assigned', agent: msg.agent, agentId: msg.agent.id, assignedAt: iso(ctx) });
        return reply(s, d.status, true);
      }

      case 'transfer': {
        const d = must(s).data;
        notClosed(d);
        if (d.agentId !== msg.by.id && !msg.supervisor) {
          throw appError('ERR_FORBIDDEN', 'only the agent assigned to the chat (or a supervisor) can transfer it');
        }
        if (msg.to && msg.to.id === d.agentId) throw appError('ERR_CONFLICT', 'the chat is already assigned to that agent');
        const at = iso(ctx);
        const transfers = [...d.transfers, { from: d.agent, to: msg.to, department: msg.department ?? null, note: msg.note ?? null, at }];
        if (msg.to) {
          save(s, ctx, { ...d, status: 'assigned', agent: msg.to, agentId: msg.to.id, assignedAt: at, transfers });
        } else {
          save(s, ctx, { ...d, status: 'queued', agent: null, agentId: null, queuedAt: at, department: msg.department ?? d.department, transfers });
        }
        return reply(s, d.status, true);
      }

      case 'resume-ai': {
        const d = must(s).data;
        notClosed(d);
        if (d.status === 'ai') return reply(s, d.status, false);
        if (d.status === 'assigned' && d.agentId !== msg.by.id) {
          throw appError('ERR_FORBIDDEN', 'only the agent assigned to the chat can hand it back to the AI');
        }
        save(s, ctx, { ...d, status: 'ai', agent: null, agentId: null });
        return reply(s, d.status, true);
      }

      case 'requeue': {
        const d = must(s).data;
        notClosed(d);
        if (d.status === 'queued') return reply(s, d.status, false);
        if (d.status === 'assigned') throw appError('ERR_CONFLICT', 'the chat already has an agent; transfer it instead');
        save(s, ctx, { ...d, status: 'queued', queuedAt: iso(ctx), department: msg.department ?? d.department });
        return reply(s, d.status, true);
      }

      case 'close': {
        const d = must(s).data;
        if (msg.by.role === 'customer' && !isCustomerOf(d, msg.by)) throw appError('ERR_NOT_FOUND', 'chat');
        if (d.status === 'closed') return reply(s, d.status, false);
        save(s, ctx, { ...d, status: 'closed', closedAt: iso(ctx), closedBy: msg.by, closeReason: msg.reason ?? null });
        return reply(s, d.status, true);
      }

      case 'receipt': {
        const d = must(s).data;
        if (msg.by.role === 'customer' && !isCustomerOf(d, msg.by)) throw appError('ERR_NOT_FOUND', 'chat');
        // An observer reading along is not the agent reading: only the assigned agent moves the agent side.
        if (msg.by.role === 'agent' && d.agentId !== msg.by.id) throw appError('ERR_FORBIDDEN', 'only the agent assigned to the chat sends its receipts');
        if (msg.seq > s.seq) throw appError('ERR_VALIDATION', `seq ${msg.seq} is beyond the last message (${s.seq})`);
        const side = msg.by.role === 'customer' ? 'customer' : 'agent';
        const cur = d.receipts[side];
        // Receipts are watermarks: read implies delivered, and neither ever goes back.
        const delivered = Math.max(cur.delivered, msg.seq);
        const read = msg.status === 'read' ? Math.max(cur.read, msg.seq) : cur.read;
        if (delivered === cur.delivered && read === cur.read) return reply(s, d.status, false);
        save(s, ctx, { ...d, receipts: { ...d.receipts, [side]: { delivered, read } } });
        return reply(s, d.status, true);
      }
    }
  },
};
