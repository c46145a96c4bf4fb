// The attendee community on the edge: direct messages, groups, typing indicators, read markers.
// Used by the /community-chat channel and by POST /client/community/messages (the same send when
// the socket is down).
import {
  communityLog,
  dmKey,
  groupKey,
  type CommunityMessage,
  type CommunityMsg,
  type CommunityReply,
  type CommunityUser,
} from '../../actors/community/community.js';
import { appError } from '../../core/errors.js';
import type { Socket } from 'socket.io';
import type { AppDeps } from '../deps.js';
import type { Realtime } from './realtime.js';
import { communityTopic } from './topics.js';

/** Who a direct message may go to: a customer or a staff user of the tenant. */
const RECIPIENT_DATATYPES = ['customer', 'user'];

export class CommunityService {
  /** Typing indicators running on this node: key → timer that clears them. */
  private readonly typing = new Map<string, NodeJS.Timeout>();

  constructor(
    private readonly deps: AppDeps,
    private readonly rt: Realtime,
  ) {}

  private ask(tenant: string, key: string, msg: CommunityMsg): Promise<CommunityReply> {
    return this.deps.runtime.ask<CommunityReply>(tenant, 'community', key, msg);
  }

  private assertRecipient(tenant: string, to: string, from: string): void {
    if (to === from) throw appError('ERR_BAD_REQUEST', 'you cannot send a message to yourself');
    if (!RECIPIENT_DATATYPES.some((dt) => this.deps.store.getRecord(tenant, dt, to))) throw appError('ERR_NOT_FOUND', `recipient ${to}`);
  }

  /**
   * A direct message: persisted in the pair's thread, then to every socket of both users but the
   * sending one (its ack carries the message).
   */
  async sendDirect(tenant: string, from: CommunityUser, to: string, text: string, clientId?: string, sender?: Socket): Promise<CommunityMessage> {
    this.assertRecipient(tenant, to, from.id);
    const r = await this.ask(tenant, dmKey(from.id, to), { type: 'send', from, to, text, clientId });
    if (!r.duplicate) {
      this.rt.emit(tenant, [communityTopic.user(tenant, to), communityTopic.user(tenant, from.id)], 'message', r.message, sender);
      this.clearTyping(tenant, from.id, `u:${to}`);
    }
    return r.message!;
  }

  /** A group message: to every socket of every member but the sending one. */
  async sendGroup(tenant: string, from: CommunityUser, groupId: string, text: string, clientId?: string, sender?: Socket): Promise<CommunityMessage> {
    const r = await this.ask(tenant, groupKey(groupId), { type: 'send', from, text, clientId });
    if (!r.duplicate) {
      this.rt.emit(tenant, [communityTopic.group(tenant, groupId)], 'groupMessage', r.message, sender);
      this.clearTyping(tenant, from.id, `g:${groupId}`);
    }
    return r.message!;
  }

  async join(tenant: string, userId: string, groupId: string): Promise<{ groupId: string; members: number; joined: boolean; lastSeq: number }> {
    const r = await this.ask(tenant, groupKey(groupId), { type: 'join', userId });
    this.rt.subscribeUser(tenant, communityTopic.user(tenant, userId), communityTopic.group(tenant, groupId));
    return { groupId, members: r.members, joined: r.changed, lastSeq: r.lastSeq };
  }

  async leave(tenant: string, userId: string, groupId: string): Promise<{ groupId: string; members: number; left: boolean }> {
    const r = await this.ask(tenant, groupKey(groupId), { type: 'leave', userId });
    this.rt.unsubscribeUser(tenant, communityTopic.user(tenant, userId), communityTopic.group(tenant, groupId));
    return { groupId, members: r.members, left: r.changed };
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
    const running = this.typing.get(key);
    if (!isTyping) {
      if (running) this.clearTyping(tenant, from.id, targetKey);
      return;
    }
    if (running) clearTimeout(running);
    else this.emitTyping(tenant, from, target, true);
    const timer = setTimeout(() => {
      this.typing.delete(key);
      this.emitTyping(tenant, from, target, false);
    }, this.deps.config.chat.typingClearMs);
    timer.unref();
    this.typing.set(key, timer);
  }

  private clearTyping(tenant: string, fromId: string, targetKey: string): void {
    const key = `${tenant}\u0000${fromId}\u0000${targetKey}`;
    const running = this.typing.get(key);
    if (!running) return;
    clearTimeout(running);
    this.typing.delete(key);
    const target = targetKey.startsWith('g:') ? { groupId: targetKey.slice(2) } : { to: targetKey.slice(2) };
    this.emitTyping(tenant, { id: fromId }, target, false);
  }

  private emitTyping(tenant: string, from: CommunityUser, target: { to?: string; groupId?: string }, isTyping: boolean): void {
    if (target.groupId !== undefined) {
      this.rt.emit(tenant, [communityTopic.group(tenant, target.groupId)], 'typing', {
        from: from.id,
        name: from.name ?? null,
        groupId: target.groupId,
        threadId: groupKey(target.groupId),
        isTyping,
      });
    } else {
      this.rt.emit(tenant, [communityTopic.user(tenant, target.to!)], 'typing', {
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
    return this.deps.store.readLog<CommunityMessage>(tenant, communityLog(threadId), afterSeq + 1, limit).map((e) => e.entry);
  }

  close(): void {
    for (const t of this.typing.values()) clearTimeout(t);
    this.typing.clear();
  }
}
