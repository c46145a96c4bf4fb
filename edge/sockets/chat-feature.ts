// One node's chat feature on the edge: socket.io, the chat area's ports this node provides (the
// fan-out to its sockets, the AI provider), the chat area's API over them (the channels and the
// REST routes share it), and the periodic sweep (idle customer sessions, inactive chats, finished
// AI streams). edge/app.ts builds one per node and hands it over with the node's ports
// (`services.sockets`), where the chat module finds it: tests run several nodes in one process.
import type { Socket } from 'socket.io';
import { createChatApi, type ChatApi, type ChatFanout, type StreamEvent } from '../../actors/chat/index.js';
import type { AiProvider } from '../../core/ai.js';
import type { OrgLookup } from '../../core/auth/org-lookup.js';
import type { Principal } from '../../core/auth/tokens.js';
import type { Bus } from '../../core/bus/bus.js';
import type { Clock } from '../../core/clock.js';
import type { Config } from '../../core/config.js';
import type { Logger } from '../../core/log.js';
import type { AppDeps } from '../deps.js';
import type { TemplatedApp } from '../http-server.js';
import type { RateLimiter } from '../rate-limit.js';
import type { ChatSocketState } from './channel-host.js';
import { chatChannel, sweepChatSockets } from './chat-channel.js';
import { chatFanout } from './chat-fanout.js';
import { communityChannel } from './community-channel.js';
import { communityFanout } from './community-fanout.js';
import { Realtime, type Outbound } from './realtime.js';
import { chatTopic } from './topics.js';
import type { Unsubscribe } from '../../core/bus/bus.js';

/** Where each node tells the others of its AI streams (cluster mode). */
const AI_STREAM_SUBJECT = 'ai.stream';

interface ChatActivity {
  tenant: string;
  chatId: string;
  last: number;
  notified: boolean;
}

declare module '../../core/actor/services.js' {
  interface NodeServices {
    /** This node's socket.io channels and the chat feature behind them. */
    readonly sockets: ChatFeature;
  }
}

/** What a node's chat feature is built from, before the node's runtime exists. */
export interface ChatFeatureParts {
  config: Config;
  bus: Bus;
  clock: Clock;
  logger: Logger;
  /** The node's AI provider (services.ai), built over its store in edge/app.ts. */
  ai: AiProvider;
  /** Whether an organisation exists and its plan: the handshake's and the rate limit's questions. */
  orgs: OrgLookup;
}

export class ChatFeature {
  readonly rt: Realtime;
  /** The chat area's ports this node provides (services.chatFanout, services.ai). */
  readonly fanout: ChatFanout;
  readonly ai: AiProvider;
  readonly orgs: OrgLookup;
  private bound: { deps: AppDeps; api: ChatApi } | undefined;
  /** Customer sockets on /chat of this node (idle sessions). */
  readonly customerSockets = new Map<Socket, ChatSocketState>();
  /** Chats with sockets on this node, by chat topic: when their last message went by. */
  readonly activity = new Map<string, ChatActivity>();
  private sweeper: NodeJS.Timeout | undefined;
  private limiter: RateLimiter | undefined;
  private unsubscribeSms: Unsubscribe | undefined;
  private unsubscribeStreams: Unsubscribe | undefined;

  constructor(parts: ChatFeatureParts) {
    const { config, bus, logger } = parts;
    const cfg = config.chat;
    this.rt = new Realtime({
      bus,
      clusterNodeId: config.natsUrl ? config.nodeId! : undefined,
      logger,
      maxBackpressure: cfg.maxBackpressureBytes,
      maxPayload: Math.max(64 * 1024, cfg.maxMessageLength * 8),
      corsOrigins: config.http.corsOrigins,
      observe: (tenant, o) => this.observe(tenant, o),
    });
    this.fanout = { ...chatFanout(this.rt), ...communityFanout(this.rt) };
    this.ai = parts.ai;
    this.orgs = parts.orgs;
  }

  /** Binds the node (the chat module's first hook): the chat area's API over its runtime and ports. */
  use(deps: AppDeps): this {
    const nodeId = deps.config.natsUrl ? deps.config.nodeId : undefined;
    // Cluster mode: a reader of GET /ai/stream may reach any node, so each node's answers go to all.
    const relay = nodeId === undefined ? undefined : (ev: StreamEvent) => deps.bus.publish(AI_STREAM_SUBJECT, { n: nodeId, e: ev });
    this.bound ??= { deps, api: createChatApi(deps, { settings: deps.config.chat, clock: deps.clock, logger: deps.logger, relay }) };
    return this;
  }

  private get node(): { deps: AppDeps; api: ChatApi } {
    if (!this.bound) throw new Error('the chat feature is used before the chat module bound it (ChatFeature.use)');
    return this.bound;
  }

  get deps(): AppDeps {
    return this.node.deps;
  }

  get api(): ChatApi {
    return this.node.api;
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
    if (this.deps.config.natsUrl) {
      const self = this.deps.config.nodeId;
      this.unsubscribeStreams = this.deps.bus.subscribe(AI_STREAM_SUBJECT, (msg) => {
        const { n, e } = msg as { n: string; e: StreamEvent };
        if (n !== self) this.api.streams.mirror(e);
      });
    }
    this.sweeper = setInterval(() => this.sweep(), this.deps.config.chat.sweepIntervalMs);
    this.sweeper.unref();
  }

  /**
   * Charges one client event to its organisation's rate limit by its principal, as a request is
   * charged (spec: Limits, "all endpoints, per org and plan"; edge/rate-limit.ts): a customer's
   * own share first, then the plan. Throws the same 429 over either.
   */
  chargeEvent(tenant: string, principal: Principal): void {
    this.limiter?.charge(tenant, this.orgs.planOf(tenant), principal);
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
    this.unsubscribeStreams?.();
    this.api.close();
    for (const s of this.customerSockets.values()) s.clearTimers();
    await this.rt.close();
  }
}
