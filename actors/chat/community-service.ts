// The attendee community: direct messages, groups, typing indicators, read markers,
// a user's conversations with their unread counts, and what a connecting socket has not seen.
// Used by the /community-chat channel and by the /client/community routes (the same send when
// the socket is down, the list of conversations, a page of one).
import type { ActorRuntime } from '../../core/actor/runtime.js';
import {
  COMMUNITY_ACTOR,
  communityLog,
  dmKey,
  dmParties,
  groupKey,
  readMarksNs,
  userGroupsNs,
  userThreadsNs,
  type CommunityMessage,
  type CommunityMsg,
  type CommunityReply,
  type CommunityUser,
  type UserThreadEntry,
} from '../community/index.js';
import type { OnOwner, OwnerReads } from '../../core/cluster/owner-reads-actor.js';
import { appError } from '../../core/errors.js';
import type { Store } from '../../core/store/store.js';
import type { ChatServices, ChatSettings, Origin } from './ports.js';

/** Who a direct message may go to: a customer or a staff user of the tenant. */
const RECIPIENT_DATATYPES = ['customer', 'user'];

/** One of a user's conversations, as the thread list shows it. */
export interface ThreadSummary {
  threadId: string;
  kind: 'direct' | 'group';
  /** The other user of a direct thread. */
  with?: string;
  groupId?: string;
  lastSeq: number;
  /** The user's read marker (markRead; their own messages count as read). */
  readSeq: number;
  unread: number;
  lastMessage: CommunityMessage | null;
}

/** Where the replay on connect stopped in a conversation it could not finish. */
export interface ReplayStop {
  threadId: string;
  /** Page on from here (GET /client/community/threads/:threadId/messages?afterSeq=). */
  nextAfterSeq: number;
  lastSeq: number;
}

export interface MessagePage {
  threadId: string;
  messages: CommunityMessage[];
  hasMore: boolean;
  lastSeq: number;
  readSeq: number;
}

export class CommunityService {
  /** Typing indicators running on this node: key → timer that clears them. */
  private readonly typers = new Map<string, NodeJS.Timeout>();

  /**
   * What a socket's events read of its tenant, read on the node that serves it (owner-reads-actor.ts).
   * The REST routes (threads, page, readUpTo) run on the owner and read this node's store.
   */
  private readonly onOwner: {
    recipientExists: OnOwner<string, boolean>;
    groups: OnOwner<string, string[]>;
    isMember: OnOwner<{ userId: string; groupId: string }, boolean>;
    unseen: OnOwner<{ userId: string; lastSeqs: Record<string, number>; limit: number }, { messages: CommunityMessage[]; stopped: ReplayStop[] }>;
  };

  constructor(
    private readonly runtime: ActorRuntime,
    private readonly store: Store,
    private readonly services: ChatServices,
    private readonly settings: ChatSettings,
    reads: OwnerReads,
  ) {
    this.onOwner = {
      recipientExists: reads.define('community.recipient-exists', (tenant, to: string) => RECIPIENT_DATATYPES.some((dt) => this.store.getRecord(tenant, dt, to) !== undefined)),
      groups: reads.define('community.groups', (tenant, userId: string) => this.store.listKv(tenant, userGroupsNs(userId)).map((e) => e.key)),
      isMember: reads.define('community.is-member', (tenant, a: { userId: string; groupId: string }) => this.isMemberHere(tenant, a.userId, a.groupId)),
      unseen: reads.define('community.unseen', (tenant, a: { userId: string; lastSeqs: Record<string, number>; limit: number }) =>
        this.unseenHere(tenant, a.userId, a.lastSeqs, a.limit),
      ),
    };
  }

  private ask(tenant: string, key: string, msg: CommunityMsg): Promise<CommunityReply> {
    return this.runtime.ask<CommunityReply>(tenant, COMMUNITY_ACTOR, key, msg);
  }

  private async assertRecipient(tenant: string, to: string, from: string): Promise<void> {
    if (to === from) throw appError('ERR_BAD_REQUEST', 'you cannot send a message to yourself');
    if (!(await this.onOwner.recipientExists(tenant, to))) throw appError('ERR_NOT_FOUND', `recipient ${to}`);
  }

  /**
   * A direct message: persisted in the pair's thread, then to every socket of both users but the
   * sending one (its ack carries the message).
   */
  async sendDirect(tenant: string, from: CommunityUser, to: string, text: string, clientId?: string, sender?: Origin): Promise<CommunityMessage> {
    await this.assertRecipient(tenant, to, from.id);
    const r = await this.ask(tenant, dmKey(from.id, to), { type: 'send', from, to, text, clientId });
    if (!r.duplicate) {
      this.services.fanout.directMessage(tenant, [to, from.id], r.message!, sender);
      this.clearTyping(tenant, from.id, `u:${to}`);
    }
    return r.message!;
  }

  /** A group message: to every socket of every member but the sending one. */
  async sendGroup(tenant: string, from: CommunityUser, groupId: string, text: string, clientId?: string, sender?: Origin): Promise<CommunityMessage> {
    const r = await this.ask(tenant, groupKey(groupId), { type: 'send', from, text, clientId });
    if (!r.duplicate) {
      this.services.fanout.groupMessage(tenant, groupId, r.message!, sender);
      this.clearTyping(tenant, from.id, `g:${groupId}`);
    }
    return r.message!;
  }

  async join(tenant: string, userId: string, groupId: string): Promise<{ groupId: string; members: number; joined: boolean; lastSeq: number }> {
    const r = await this.ask(tenant, groupKey(groupId), { type: 'join', userId });
    this.services.fanout.followGroup(tenant, userId, groupId);
    return { groupId, members: r.members, joined: r.changed, lastSeq: r.lastSeq };
  }

  /** The groups `userId` belongs to (a new connection follows them all). */
  groups(tenant: string, userId: string): Promise<string[]> {
    return this.onOwner.groups(tenant, userId);
  }

  private isMemberHere(tenant: string, userId: string, groupId: string): boolean {
    return this.store.getKv(tenant, userGroupsNs(userId), groupId) !== undefined;
  }

  async leave(tenant: string, userId: string, groupId: string): Promise<{ groupId: string; members: number; left: boolean }> {
    if (!(await this.onOwner.isMember(tenant, { userId, groupId }))) throw appError('ERR_NOT_FOUND', `group membership ${groupId}`);
    const r = await this.ask(tenant, groupKey(groupId), { type: 'leave', userId });
    this.services.fanout.unfollowGroup(tenant, userId, groupId);
    return { groupId, members: r.members, left: r.changed };
  }

  /** The conversation a read marker names: the other user of a direct thread, a group, or the thread id. */
  threadOf(userId: string, p: { with?: string; groupId?: string; threadId?: string }): string {
    const threadId = p.with ? dmKey(userId, p.with) : p.groupId ? groupKey(p.groupId) : p.threadId;
    if (!threadId) throw appError('ERR_VALIDATION', 'payload needs one of with, groupId or threadId');
    return threadId;
  }

  /** Typing to a user (not oneself) or in a group the sender belongs to; see setTyping. */
  async typing(tenant: string, from: CommunityUser, target: { to: string } | { groupId: string }, isTyping: boolean): Promise<{ ok: true }> {
    if ('to' in target && target.to === from.id) throw appError('ERR_BAD_REQUEST', 'typing to yourself');
    if ('groupId' in target && !(await this.onOwner.isMember(tenant, { userId: from.id, groupId: target.groupId }))) throw appError('ERR_FORBIDDEN', 'join the group first');
    this.setTyping(tenant, from, target, isTyping);
    return { ok: true };
  }

  /** A message without the socket: exactly one of `to` (direct) or `groupId`. */
  send(tenant: string, from: CommunityUser, p: { to?: string; groupId?: string; text: string; clientId?: string }): Promise<CommunityMessage> {
    if ((p.to === undefined) === (p.groupId === undefined)) throw appError('ERR_VALIDATION', 'body needs exactly one of to or groupId');
    return p.to !== undefined ? this.sendDirect(tenant, from, p.to, p.text, p.clientId) : this.sendGroup(tenant, from, p.groupId!, p.text, p.clientId);
  }

  /** The reader's marker moves to `seq` (over REST: only a reader of the conversation). */
  readUpTo(tenant: string, userId: string, threadId: string, seq: number): Promise<{ threadId: string; seq: number }> {
    this.assertReader(tenant, userId, threadId);
    return this.markRead(tenant, userId, threadId, seq);
  }

  async markRead(tenant: string, userId: string, threadId: string, seq: number): Promise<{ threadId: string; seq: number }> {
    await this.ask(tenant, threadId, { type: 'mark-read', userId, seq });
    return { threadId, seq };
  }

  /**
   * A typing indicator: `typing` to the other user (or the group) when it starts, and again with
   * isTyping false when it stops: explicitly, with the next message, or `typingClearMs` (3 s)
   * after the last typing event.
   */
  setTyping(tenant: string, from: CommunityUser, target: { to?: string; groupId?: string }, isTyping: boolean): void {
    const targetKey = target.groupId !== undefined ? `g:${target.groupId}` : `u:${target.to}`;
    const key = `${tenant}\u0000${from.id}\u0000${targetKey}`;
    const running = this.typers.get(key);
    if (!isTyping) {
      if (running) this.clearTyping(tenant, from.id, targetKey);
      return;
    }
    if (running) clearTimeout(running);
    else this.emitTyping(tenant, from, target, true);
    const timer = setTimeout(() => {
      this.typers.delete(key);
      this.emitTyping(tenant, from, target, false);
    }, this.settings.typingClearMs);
    timer.unref();
    this.typers.set(key, timer);
  }

  private clearTyping(tenant: string, fromId: string, targetKey: string): void {
    const key = `${tenant}\u0000${fromId}\u0000${targetKey}`;
    const running = this.typers.get(key);
    if (!running) return;
    clearTimeout(running);
    this.typers.delete(key);
    const target = targetKey.startsWith('g:') ? { groupId: targetKey.slice(2) } : { to: targetKey.slice(2) };
    this.emitTyping(tenant, { id: fromId }, target, false);
  }

  private emitTyping(tenant: string, from: CommunityUser, target: { to?: string; groupId?: string }, isTyping: boolean): void {
    if (target.groupId !== undefined) {
      this.services.fanout.typingInGroup(tenant, target.groupId, {
        from: from.id,
        name: from.name ?? null,
        groupId: target.groupId,
        threadId: groupKey(target.groupId),
        isTyping,
      });
    } else {
      this.services.fanout.typingToUser(tenant, target.to!, {
        from: from.id,
        name: from.name ?? null,
        to: target.to,
        threadId: dmKey(from.id, target.to!),
        isTyping,
      });
    }
  }

  /** Messages of a conversation after `afterSeq` (replay on reconnect). */
  after(tenant: string, threadId: string, afterSeq: number, limit: number): CommunityMessage[] {
    return this.store.readLog<CommunityMessage>(tenant, communityLog(threadId), afterSeq + 1, limit).map((e) => e.entry);
  }

  /** Whether `userId` may read the conversation: a party of the direct thread, a member of the group. */
  isReader(tenant: string, userId: string, threadId: string): boolean {
    if (threadId.startsWith('g:')) return this.store.getKv(tenant, userGroupsNs(userId), threadId.slice(2)) !== undefined;
    return threadId.startsWith('d:') && dmParties(threadId).includes(userId);
  }

  assertReader(tenant: string, userId: string, threadId: string): void {
    if (this.isReader(tenant, userId, threadId)) return;
    if (threadId.startsWith('g:')) throw appError('ERR_FORBIDDEN', 'join the group to read it');
    throw appError('ERR_NOT_FOUND', `conversation ${threadId}`);
  }

  private readSeq(tenant: string, userId: string, threadId: string): number {
    return this.store.getKv<{ seq: number }>(tenant, readMarksNs(userId), threadId)?.seq ?? 0;
  }

  private lastMessage(tenant: string, threadId: string, lastSeq: number): CommunityMessage | null {
    return lastSeq > 0 ? (this.store.readLog<CommunityMessage>(tenant, communityLog(threadId), lastSeq, 1)[0]?.entry ?? null) : null;
  }

  /**
   * The user's conversations (direct threads from their first message, and groups), with
   * `also` (thread ids a client named) where the user reads them; without last messages.
   */
  private conversations(tenant: string, userId: string, also: string[] = []): ThreadSummary[] {
    const ids = new Map<string, ThreadSummary>();
    const add = (threadId: string, extra: Partial<ThreadSummary>) => {
      if (ids.has(threadId)) return;
      const lastSeq = this.store.lastLogSeq(tenant, communityLog(threadId));
      const readSeq = Math.min(this.readSeq(tenant, userId, threadId), lastSeq);
      const kind = threadId.startsWith('g:') ? 'group' : 'direct';
      ids.set(threadId, { threadId, kind, ...extra, lastSeq, readSeq, unread: lastSeq - readSeq, lastMessage: null });
    };
    for (const { key, value } of this.store.listKv<UserThreadEntry>(tenant, userThreadsNs(userId))) add(key, { with: value.with });
    for (const { key } of this.store.listKv(tenant, userGroupsNs(userId))) add(groupKey(key), { groupId: key });
    for (const threadId of also) {
      if (!this.isReader(tenant, userId, threadId)) continue;
      if (threadId.startsWith('g:')) add(threadId, { groupId: threadId.slice(2) });
      else add(threadId, { with: dmParties(threadId).find((p) => p !== userId) ?? userId });
    }
    return [...ids.values()];
  }

  /** Most recent message first; conversations without messages last. */
  private byRecency(tenant: string, list: ThreadSummary[]): ThreadSummary[] {
    for (const t of list) t.lastMessage = this.lastMessage(tenant, t.threadId, t.lastSeq);
    return list.sort((a, b) => (b.lastMessage?.at ?? '').localeCompare(a.lastMessage?.at ?? '') || a.threadId.localeCompare(b.threadId));
  }

  /** The user's conversations with unread counts, most recent first (`unreadOnly`: those with unread). */
  threads(tenant: string, userId: string, unreadOnly = false): ThreadSummary[] {
    const list = this.conversations(tenant, userId).filter((t) => !unreadOnly || t.unread > 0);
    return this.byRecency(tenant, list);
  }

  /**
   * What a connecting socket has not seen, in order within each conversation: after
   * `lastSeqs[thread]` where the client named it, else after the user's read marker; the
   * conversations the client named first, then the others, each latest message first; at most
   * `limit` messages in all. `stopped` lists the conversations left unfinished, to page on.
   */
  unseen(tenant: string, userId: string, lastSeqs: Record<string, number>, limit: number): Promise<{ messages: CommunityMessage[]; stopped: ReplayStop[] }> {
    return this.onOwner.unseen(tenant, { userId, lastSeqs, limit });
  }

  private unseenHere(tenant: string, userId: string, lastSeqs: Record<string, number>, limit: number): { messages: CommunityMessage[]; stopped: ReplayStop[] } {
    const pending = this.conversations(tenant, userId, Object.keys(lastSeqs))
      .map((t) => ({ ...t, from: Math.min(lastSeqs[t.threadId] ?? t.readSeq, t.lastSeq) }))
      .filter((t) => t.lastSeq > t.from);
    const messages: CommunityMessage[] = [];
    const stopped: ReplayStop[] = [];
    const named = (t: { threadId: string }) => Number(Object.hasOwn(lastSeqs, t.threadId));
    const ordered = (this.byRecency(tenant, pending) as typeof pending).sort((a, b) => named(b) - named(a));
    for (const t of ordered) {
      const n = Math.min(t.lastSeq - t.from, limit - messages.length);
      if (n > 0) messages.push(...this.after(tenant, t.threadId, t.from, n));
      if (t.from + n < t.lastSeq) stopped.push({ threadId: t.threadId, nextAfterSeq: t.from + Math.max(n, 0), lastSeq: t.lastSeq });
    }
    return { messages, stopped };
  }

  /** A page of a conversation: after `afterSeq`, or the latest ones before `beforeSeq`. */
  page(tenant: string, userId: string, threadId: string, p: { afterSeq?: number; beforeSeq?: number; limit?: number }): MessagePage {
    this.assertReader(tenant, userId, threadId);
    const limit = p.limit ?? 50;
    const log = communityLog(threadId);
    const lastSeq = this.store.lastLogSeq(tenant, log);
    let messages: CommunityMessage[];
    let hasMore: boolean;
    if (p.afterSeq !== undefined) {
      messages = this.after(tenant, threadId, p.afterSeq, limit);
      hasMore = messages.length > 0 ? messages[messages.length - 1].seq < lastSeq : p.afterSeq < lastSeq;
    } else {
      const before = Math.min(p.beforeSeq ?? lastSeq + 1, lastSeq + 1);
      const from = Math.max(1, before - limit);
      messages = before > 1 ? this.store.readLog<CommunityMessage>(tenant, log, from, before - from).map((e) => e.entry) : [];
      hasMore = from > 1;
    }
    return { threadId, messages, hasMore, lastSeq, readSeq: Math.min(this.readSeq(tenant, userId, threadId), lastSeq) };
  }

  close(): void {
    for (const t of this.typers.values()) clearTimeout(t);
    this.typers.clear();
  }
}
