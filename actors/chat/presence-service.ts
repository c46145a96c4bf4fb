// Presence: tells the tenant's presence actor about connections and statuses, announces what
// changed (an agent's presence to staff, anyone's coming and going to those watching who is
// online), and asks the actor to sweep when a grace period or a REST status
// runs out (one timer per tenant, set to the earliest moment anything can change).
import type { ActorRuntime } from '../../core/actor/runtime.js';
import {
  PRESENCE_ACTOR,
  PRESENCE_KEY,
  type PresenceChange,
  type PresenceMsg,
  type PresenceReply,
  type PresenceStatus,
  type PresenceUser,
  type PresenceView,
  type UserKind,
} from '../presence/index.js';
import { appError } from '../../core/errors.js';
import { isSupervisor } from './roles.js';
import type { ChatServices, ChatSettings } from './ports.js';

/**
 * Sweeps of one tenant run at most this often. A sweep reads every user of the tenant, so
 * thousands of sockets closing over a second (a venue's Wi-Fi dropping, a load test ending) would
 * otherwise set off one sweep per distinct grace deadline: O(users²) on the event loop.
 */
export const SWEEP_MIN_GAP_MS = 100;

/** Who is connected, as the presence actor keeps them: staff act as agents, everyone else as customers. */
export function presenceUser(u: { userId: string; email: string | null; name: string | null; role: 'agent' | 'customer' }): PresenceUser {
  return { userId: u.userId, email: u.email, name: u.name, kind: u.role === 'agent' ? 'agent' : 'customer' };
}

export class PresenceService {
  private readonly timers = new Map<string, { at: number; timer: NodeJS.Timeout }>();
  /** When each tenant's last sweep ran (epoch ms). */
  private readonly swept = new Map<string, number>();
  private closed = false;

  constructor(
    private readonly runtime: ActorRuntime,
    private readonly services: ChatServices,
    private readonly settings: ChatSettings,
  ) {}

  private get graceMs(): number {
    return this.settings.presenceGraceMs;
  }

  ask(tenant: string, msg: PresenceMsg): Promise<PresenceReply> {
    return this.runtime.ask<PresenceReply>(tenant, PRESENCE_ACTOR, PRESENCE_KEY, msg);
  }

  /** Everyone online now (of one kind). */
  async online(tenant: string, kind?: UserKind): Promise<PresenceView[]> {
    return (await this.ask(tenant, { type: 'list', ...(kind ? { kind } : {}), onlineOnly: true })).users ?? [];
  }

  /** One agent's presence; an agent who never connected is offline, never seen. */
  async agent(tenant: string, email: string): Promise<Omit<PresenceView, 'userId'> & { userId: string | null }> {
    const r = await this.ask(tenant, { type: 'get', kind: 'agent', email });
    return r.user ?? { userId: null, email, name: null, kind: 'agent', status: 'offline', online: false, connections: 0, lastSeen: null };
  }

  /**
   * An agent's status set over REST: their own, or anyone's by a supervisor (SUPERVISOR_ROLES).
   * It keeps them online for `presenceTtlMs` without a socket.
   */
  async setAgentStatus(tenant: string, caller: { userId: string; email: string | null; roles: readonly string[] }, email: string, status: PresenceStatus): Promise<PresenceView> {
    const self = caller.email?.toLowerCase() === email;
    if (!self && !isSupervisor(caller.roles)) {
      throw appError('ERR_FORBIDDEN', "setting another agent's status needs a supervisor role");
    }
    let user: PresenceUser;
    if (self) user = { userId: caller.userId, email, name: null, kind: 'agent' };
    else {
      const known = (await this.ask(tenant, { type: 'get', kind: 'agent', email })).user;
      user = { userId: known?.userId ?? email, email, name: known?.name ?? null, kind: 'agent' };
    }
    return (await this.setStatus(tenant, user, status, true)).user!;
  }

  /** Presence totals: agents by status, customers online, open sockets. */
  async stats(tenant: string) {
    const r = await this.ask(tenant, { type: 'stats' });
    return { ...r.stats!, at: new Date(this.services.clock.now()).toISOString() };
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
    const r = await this.ask(tenant, { type: 'set-status', user, status, viaRest, ttlMs: this.settings.presenceTtlMs });
    this.announce(tenant, r.changes);
    this.schedule(tenant, r.dueAt);
    return r;
  }

  announce(tenant: string, changes: PresenceChange[]): void {
    for (const c of changes) {
      const { onlineChanged, ...view } = c;
      if (c.kind === 'agent') this.services.fanout.agentPresence(tenant, { ...view, at: new Date(this.services.clock.now()).toISOString() });
      if (onlineChanged) this.services.fanout.onlineStatus(tenant, { userId: c.userId, online: c.online, status: c.status, lastSeen: c.lastSeen });
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
      this.swept.set(tenant, this.services.clock.now());
      this.ask(tenant, { type: 'sweep', graceMs: this.graceMs }).then(
        (r) => {
          this.announce(tenant, r.changes);
          this.schedule(tenant, r.dueAt);
        },
        (err) => this.services.logger.warn({ err, tenant }, 'presence sweep failed'),
      );
    }, Math.max(0, at - this.services.clock.now()) + 5);
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
