// Presence on the edge: tells the tenant's presence actor about sockets and statuses, announces
// what changed (`presence-change` to staff on /chat for agents, `onlineStatus` to watchers on
// /community-chat for everyone), and asks the actor to sweep when a grace period or a REST status
// runs out (one timer per tenant, set to the earliest moment anything can change).
import {
  PRESENCE_KEY,
  type PresenceChange,
  type PresenceMsg,
  type PresenceReply,
  type PresenceStatus,
  type PresenceUser,
} from '../../actors/presence/presence.js';
import type { AppDeps } from '../deps.js';
import type { SocketUser } from './handshake.js';
import type { Realtime } from './realtime.js';
import { chatTopic, communityTopic } from './topics.js';

/**
 * Sweeps of one tenant run at most this often. A sweep reads every user of the tenant, so
 * thousands of sockets closing over a second (a venue's Wi-Fi dropping, a load test ending) would
 * otherwise set off one sweep per distinct grace deadline: O(users²) on the event loop.
 */
export const SWEEP_MIN_GAP_MS = 100;

export function presenceUser(u: SocketUser): PresenceUser {
  return { userId: u.userId, email: u.email, name: u.name, kind: u.role === 'agent' ? 'agent' : 'customer' };
}

export class PresenceService {
  private readonly timers = new Map<string, { at: number; timer: NodeJS.Timeout }>();
  /** When each tenant's last sweep ran (epoch ms). */
  private readonly swept = new Map<string, number>();
  private closed = false;

  constructor(
    private readonly deps: AppDeps,
    private readonly rt: Realtime,
  ) {}

  private get graceMs(): number {
    return this.deps.config.chat.presenceGraceMs;
  }

  ask(tenant: string, msg: PresenceMsg): Promise<PresenceReply> {
    return this.deps.runtime.ask<PresenceReply>(tenant, 'presence', PRESENCE_KEY, msg);
  }

  async connect(tenant: string, user: PresenceUser, socketId: string): Promise<void> {
    const r = await this.ask(tenant, { type: 'connect', user, socketId });
    this.announce(tenant, r.changes);
  }

  async disconnect(tenant: string, user: PresenceUser, socketId: string): Promise<void> {
    const r = await this.ask(tenant, { type: 'disconnect', user, socketId, graceMs: this.graceMs });
    this.announce(tenant, r.changes);
    this.schedule(tenant, r.dueAt);
  }

  async setStatus(tenant: string, user: PresenceUser, status: PresenceStatus, viaRest: boolean): Promise<PresenceReply> {
    const r = await this.ask(tenant, { type: 'set-status', user, status, viaRest, ttlMs: this.deps.config.chat.presenceTtlMs });
    this.announce(tenant, r.changes);
    this.schedule(tenant, r.dueAt);
    return r;
  }

  announce(tenant: string, changes: PresenceChange[]): void {
    for (const c of changes) {
      const { onlineChanged, ...view } = c;
      if (c.kind === 'agent') this.rt.emit(tenant, [chatTopic.staff(tenant)], 'presence-change', { ...view, at: new Date(this.deps.clock.now()).toISOString() });
      if (onlineChanged) {
        this.rt.emit(tenant, [communityTopic.presence(tenant)], 'onlineStatus', {
          userId: c.userId,
          online: c.online,
          status: c.status,
          lastSeen: c.lastSeen,
        });
      }
    }
  }

  private schedule(tenant: string, dueAt: number): void {
    if (this.closed || dueAt === 0) return;
    const at = Math.max(dueAt, (this.swept.get(tenant) ?? 0) + SWEEP_MIN_GAP_MS);
    const cur = this.timers.get(tenant);
    if (cur && cur.at <= at) return;
    if (cur) clearTimeout(cur.timer);
    const timer = setTimeout(() => {
      this.timers.delete(tenant);
      this.swept.set(tenant, this.deps.clock.now());
      this.ask(tenant, { type: 'sweep', graceMs: this.graceMs }).then(
        (r) => {
          this.announce(tenant, r.changes);
          this.schedule(tenant, r.dueAt);
        },
        (err) => this.deps.logger.warn({ err, tenant }, 'presence sweep failed'),
      );
    }, Math.max(0, at - this.deps.clock.now()) + 5);
    timer.unref();
    this.timers.set(tenant, { at, timer });
  }

  close(): void {
    this.closed = true;
    for (const t of this.timers.values()) clearTimeout(t.timer);
    this.timers.clear();
    this.swept.clear();
  }
}
