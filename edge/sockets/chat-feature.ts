// One node's chat feature on the edge: socket.io, the chat area's API built with this node's
// fan-out and AI provider (the channels and the REST routes share it), and the periodic sweep
// (idle customer sessions, inactive chats, finished AI streams).
// One instance per app (tests run several apps in one process), found from the app's deps.
import type { Socket } from 'socket.io';
import { createChatApi, type ChatApi } from '../../actors/chat/index.js';
import { createAiProvider } from '../../core/ai.js';
import type { Principal } from '../../core/auth/tokens.js';
import type { AppDeps } from '../deps.js';
import type { TemplatedApp } from '../http-server.js';
import type { RateLimiter } from '../rate-limit.js';
import { chatChannel, sweepChatSockets, type ChatSocketState } from './chat-channel.js';
import { chatFanout } from './chat-fanout.js';
import { communityChannel } from './community-channel.js';
import { communityFanout } from './community-fanout.js';
import { Realtime, type Outbound } from './realtime.js';
import { chatTopic } from './topics.js';
import type { Unsubscribe } from '../../core/bus/bus.js';

interface ChatActivity {
  tenant: string;
  chatId: string;
  last: number;
  notified: boolean;
}

export class ChatFeature {
  readonly rt: Realtime;
  readonly api: ChatApi;
  /** Customer sockets on /chat of this node (idle sessions). */
  readonly customerSockets = new Map<Socket, ChatSocketState>();
  /** Chats with sockets on this node, by chat topic: when their last message went by. */
  readonly activity = new Map<string, ChatActivity>();
  private sweeper: NodeJS.Timeout | undefined;
  private limiter: RateLimiter | undefined;
  private unsubscribeSms: Unsubscribe | undefined;

  constructor(readonly deps: AppDeps) {
    const cfg = deps.config.chat;
    this.rt = new Realtime({
      bus: deps.bus,
      clusterNodeId: deps.config.natsUrl ? deps.config.nodeId! : undefined,
      logger: deps.logger,
      maxBackpressure: cfg.maxBackpressureBytes,
      maxPayload: Math.max(64 * 1024, cfg.maxMessageLength * 8),
      corsOrigins: deps.config.http.corsOrigins,
      observe: (tenant, o) => this.observe(tenant, o),
    });
    const fanout = { ...chatFanout(this.rt), ...communityFanout(this.rt) };
    const ai = createAiProvider(deps.config.providers.ai, deps.store, deps.logger);
    this.api = createChatApi(deps.runtime, deps.store, { fanout, ai, clock: deps.clock, logger: deps.logger }, cfg);
  }

  attach(app: TemplatedApp, limiter?: RateLimiter): void {
    this.limiter = limiter;
    this.rt.attach(app);
    chatChannel(this);
    communityChannel(this);
  }

  start(): void {
    // An inbound SMS recorded by the phone/CRM area reaches the tenant's staff on /chat. Every
    // node gets it from the bus, so each publishes to its own sockets only.
    this.unsubscribeSms = this.deps.bus.subscribe('sms.received.*', (sms, subject) => {
      this.rt.publishLocal([chatTopic.staff(subject.slice('sms.received.'.length))], 'sms.received', sms);
    });
    this.sweeper = setInterval(() => this.sweep(), this.deps.config.chat.sweepIntervalMs);
    this.sweeper.unref();
  }

  /**
   * Charges one client event to its organisation's rate limit by its principal, as a request is
   * charged (spec: Limits, "all endpoints, per org and plan"; edge/rate-limit.ts): a customer's
   * own share first, then the plan. Throws the same 429 over either.
   */
  chargeEvent(tenant: string, principal: Principal): void {
    this.limiter?.charge(tenant, this.deps.store.getOrg(tenant)?.plan, principal);
  }

  private observe(tenant: string, o: Extract<Outbound, { op: 'emit' }>): void {
    if (o.ev !== 'message' && o.ev !== 'chat-ended') return;
    for (const topic of o.to) {
      const { kind, id } = Realtime.parse(topic);
      if (kind !== 'chat' || !id) continue;
      if (o.ev === 'chat-ended') this.activity.delete(topic);
      else this.activity.set(topic, { tenant, chatId: id, last: this.deps.clock.now(), notified: false });
    }
  }

  private sweep(): void {
    const now = this.deps.clock.now();
    const idleMs = this.deps.config.chat.chatInactivityMs;
    for (const [topic, a] of this.activity) {
      if (!this.rt.hasSubscribers(topic)) {
        this.activity.delete(topic);
        continue;
      }
      if (a.notified || now - a.last < idleMs) continue;
      a.notified = true;
      this.rt.publishLocal([topic], 'chat-inactivity', {
        chatId: a.chatId,
        idleSeconds: Math.floor((now - a.last) / 1000),
        lastMessageAt: new Date(a.last).toISOString(),
      });
    }
    sweepChatSockets(this, now);
    this.api.streams.sweep();
  }

  async stop(): Promise<void> {
    if (this.sweeper) clearInterval(this.sweeper);
    this.unsubscribeSms?.();
    this.api.close();
    for (const s of this.customerSockets.values()) s.clearTimers();
    await this.rt.close();
  }
}

const features = new WeakMap<AppDeps, ChatFeature>();

/** The chat feature of the app that owns `deps` (created on first use). */
export function chatFeature(deps: AppDeps): ChatFeature {
  let f = features.get(deps);
  if (!f) features.set(deps, (f = new ChatFeature(deps)));
  return f;
}
