// The community actor: one per attendee conversation, either a direct-message thread between two
// users (key `d:<a>:<b>`, ids sorted) or a group (key `g:<groupId>`). It numbers and persists the
// conversation's messages (acked only after commit), keeps a group's members (kv, so a member's
// every socket rejoins on connect), lists a direct thread under both users from its first message
// (kv, so a user who never connected finds it), and keeps each reader's read marker (a sender has
// read up to their own message).
import type { ActorContext, ActorKind, ActivationContext } from '../../core/actor/runtime.js';
import { appError } from '../../core/errors.js';
import { newId } from '../../core/ids.js';
import { COMMUNITY_ACTOR, type CommunityMessage, type CommunityMsg, type CommunityReply } from './messages.js';

/** Group members: kv namespace per group, key = user id. */
export const groupMembersNs = (groupId: string) => `community-group:${groupId}`;
/** A user's groups: kv namespace per user, key = group id. */
export const userGroupsNs = (userId: string) => `community-member:${userId}`;
/** A user's direct-message threads: kv namespace per user, key = conversation key. */
export const userThreadsNs = (userId: string) => `community-thread:${userId}`;
/** A user's read markers: kv namespace per user, key = conversation key. */
export const readMarksNs = (userId: string) => `community-read:${userId}`;
export const communityLog = (key: string) => `community:${key}`;

const CLIENT_IDS = 500;

export function dmKey(a: string, b: string): string {
  return a < b ? `d:${a}:${b}` : `d:${b}:${a}`;
}

export function groupKey(groupId: string): string {
  return `g:${groupId}`;
}

export interface CommunityState {
  seq: number;
  /** Group members (groups only). */
  members: Set<string>;
  clientIds: Map<string, CommunityMessage>;
  /** Read markers written so far (loaded per reader on first use), so they never go back. */
  reads: Map<string, number>;
  /** A direct thread is listed under both users (userThreadsNs). */
  listed: boolean;
}

export interface UserThreadEntry {
  /** The other user of a direct thread. */
  with: string;
  at: string;
}

function isGroup(key: string): boolean {
  return key.startsWith('g:');
}

export function dmParties(key: string): [string, string] {
  const [, a, b] = key.split(':');
  return [a, b];
}

function out(s: CommunityState, changed: boolean, extra: Partial<CommunityReply> = {}): CommunityReply {
  return { changed, members: s.members.size, lastSeq: s.seq, ...extra };
}

function remember(s: CommunityState, m: CommunityMessage): void {
  if (!m.clientId) return;
  s.clientIds.set(`${m.from.id}\u0000${m.clientId}`, m);
  if (s.clientIds.size > CLIENT_IDS) s.clientIds.delete(s.clientIds.keys().next().value as string);
}

function assertParticipant(s: CommunityState, key: string, userId: string): void {
  if (isGroup(key)) {
    if (!s.members.has(userId)) throw appError('ERR_FORBIDDEN', 'join the group before writing to it');
  } else if (!dmParties(key).includes(userId)) {
    throw appError('ERR_NOT_FOUND', 'conversation');
  }
}

function send(s: CommunityState, msg: Extract<CommunityMsg, { type: 'send' }>, ctx: ActorContext): CommunityReply {
  assertParticipant(s, ctx.key, msg.from.id);
  if (msg.clientId) {
    const seen = s.clientIds.get(`${msg.from.id}\u0000${msg.clientId}`);
    if (seen) return out(s, false, { message: seen, duplicate: true });
  }
  const seq = s.seq + 1;
  const now = ctx.clock.now();
  const m: CommunityMessage = { id: newId(now), seq, threadId: ctx.key, from: msg.from, text: msg.text, at: new Date(now).toISOString() };
  if (isGroup(ctx.key)) m.groupId = ctx.key.slice(2);
  else m.to = msg.to ?? dmParties(ctx.key).find((p) => p !== msg.from.id);
  if (msg.clientId) m.clientId = msg.clientId;
  // Acknowledged under CHAT_DURABILITY (the store's write journal by default), not a transaction each.
  ctx.batch.journal().append(ctx.tenant, communityLog(ctx.key), seq, m);
  if (!isGroup(ctx.key) && !s.listed) {
    const [a, b] = dmParties(ctx.key);
    ctx.batch.putKv(ctx.tenant, userThreadsNs(a), ctx.key, { with: b, at: m.at } satisfies UserThreadEntry);
    ctx.batch.putKv(ctx.tenant, userThreadsNs(b), ctx.key, { with: a, at: m.at } satisfies UserThreadEntry);
    s.listed = true;
  }
  // Your own message is not unread to you.
  writeReadMark(s, msg.from.id, seq, ctx);
  s.seq = seq;
  remember(s, m);
  return out(s, true, { message: m });
}

function readMark(s: CommunityState, userId: string, ctx: ActorContext): number {
  return s.reads.get(userId) ?? ctx.store.getKv<{ seq: number }>(ctx.tenant, readMarksNs(userId), ctx.key)?.seq ?? 0;
}

/** Moves a reader's marker forward (never back); false when it was there already. */
function writeReadMark(s: CommunityState, userId: string, seq: number, ctx: ActorContext): boolean {
  if (readMark(s, userId, ctx) >= seq) return false;
  s.reads.set(userId, seq);
  ctx.batch.putKv(ctx.tenant, readMarksNs(userId), ctx.key, { seq, at: new Date(ctx.clock.now()).toISOString() });
  return true;
}

export const communityActor: ActorKind<CommunityState, CommunityMsg, CommunityReply> = {
  kind: COMMUNITY_ACTOR,

  activate(ctx: ActivationContext): CommunityState {
    const seq = ctx.store.lastLogSeq(ctx.tenant, communityLog(ctx.key));
    const members = new Set<string>();
    if (isGroup(ctx.key)) for (const { key } of ctx.store.listKv(ctx.tenant, groupMembersNs(ctx.key.slice(2)))) members.add(key);
    // Threads from before the per-user lists are listed with their next message.
    const listed = isGroup(ctx.key) || (seq > 0 && dmParties(ctx.key).every((u) => ctx.store.getKv(ctx.tenant, userThreadsNs(u), ctx.key) !== undefined));
    const s: CommunityState = { seq, members, clientIds: new Map(), reads: new Map(), listed };
    if (seq > 0) {
      for (const e of ctx.store.readLog<CommunityMessage>(ctx.tenant, communityLog(ctx.key), Math.max(1, seq - CLIENT_IDS + 1))) {
        remember(s, e.entry);
      }
    }
    return s;
  },

  receive(s, msg, ctx): CommunityReply {
    switch (msg.type) {
      case 'send':
        return send(s, msg, ctx);
      case 'join': {
        if (!isGroup(ctx.key)) throw appError('ERR_BAD_REQUEST', 'only groups can be joined');
        if (s.members.has(msg.userId)) return out(s, false);
        const at = new Date(ctx.clock.now()).toISOString();
        const groupId = ctx.key.slice(2);
        ctx.batch.putKv(ctx.tenant, groupMembersNs(groupId), msg.userId, { at });
        ctx.batch.putKv(ctx.tenant, userGroupsNs(msg.userId), groupId, { at });
        // What the group said before someone joined is history to them, not unread.
        writeReadMark(s, msg.userId, s.seq, ctx);
        s.members.add(msg.userId);
        return out(s, true);
      }
      case 'leave': {
        if (!isGroup(ctx.key)) throw appError('ERR_BAD_REQUEST', 'only groups can be left');
        if (!s.members.delete(msg.userId)) return out(s, false);
        const groupId = ctx.key.slice(2);
        ctx.batch.deleteKv(ctx.tenant, groupMembersNs(groupId), msg.userId);
        ctx.batch.deleteKv(ctx.tenant, userGroupsNs(msg.userId), groupId);
        return out(s, true);
      }
      case 'mark-read': {
        assertParticipant(s, ctx.key, msg.userId);
        if (msg.seq > s.seq) throw appError('ERR_VALIDATION', `seq ${msg.seq} is beyond the last message (${s.seq})`);
        ctx.batch.journal();
        return out(s, writeReadMark(s, msg.userId, msg.seq, ctx));
      }
    }
  },
};
