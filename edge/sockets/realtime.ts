// socket.io on the uWS edge, and the fan-out of server events.
//
// socket.io is attached to the edge's uWebSockets.js app (`io.attachApp`), path /socket.io. On a
// single node a client may start on HTTP long-polling and upgrade to websocket (socket.io-client's
// default); in cluster mode only websocket is served (polling would need sticky sessions) and a
// polling client is told so (polling-refusal.ts). Events to many sockets do not go through
// socket.io's adapter: each audience is a uWS pub/sub topic (a user's sockets, a chat, a group, a
// tenant's staff), a socket's websocket subscribes to its topics, and one event is encoded once and
// handed to `app.publish`, which writes it to every subscriber in C++. A socket still polling has
// no websocket to subscribe: its topics are kept here and it gets each event through socket.io,
// until it upgrades and its websocket takes them over. (socket.io's own uWS fast path patches the
// shared Adapter prototype with the last attached app, which breaks with two apps in one process,
// and takes the slow path as soon as a room excludes a socket.)
//
// A fan-out is delivered to this node's sockets on the next microtask, in order, and in cluster
// mode also published on the bus (subject `rt.<tenant>`, tagged with this node's id) so every
// other node publishes it to its own sockets. A single node skips the bus: its in-process copy
// through JSON would only cost time. Control operations (subscribe a user's every socket to a
// topic) travel the same way, so they stay in order with the events that follow them.
import { Server, type Socket } from 'socket.io';
import type { Bus, Unsubscribe } from '../../core/bus/bus.js';
import type { Logger } from '../../core/log.js';
import { busAdapter } from '../cluster-adapter.js';
import type { TemplatedApp } from '../http-server.js';
import { refusePolling } from './polling-refusal.js';

export const NS_CHAT = '/chat';
export const NS_COMMUNITY = '/community-chat';

const SEP = '\u001f';

/** What crosses the bus. */
export type Outbound = (
  | { op: 'emit'; to: string[]; ev: string; d: unknown }
  | { op: 'sub' | 'unsub'; user: string; topic: string }
) & {
  /** The node that sent it (cluster mode): it delivered to its own sockets already. */
  n?: string;
};

interface UwsSocket {
  subscribe(topic: string): boolean;
  unsubscribe(topic: string): boolean;
  /** To every subscriber of the topic except this socket. */
  publish(topic: string, message: string, isBinary?: boolean): boolean;
}

/** The uWS websocket under a socket.io socket; undefined while it is on HTTP long-polling. */
function wsOf(socket: Socket): UwsSocket | undefined {
  const transport = (socket.conn as unknown as { transport?: { name?: string; socket?: UwsSocket } }).transport;
  return transport?.name === 'websocket' ? transport.socket : undefined;
}

export interface RealtimeOptions {
  bus: Bus;
  /** This node's id; set only in cluster mode, where fan-outs also cross the bus. */
  clusterNodeId?: string;
  logger: Logger;
  /** Per-socket send buffer before uWS skips a slow receiver. */
  maxBackpressure: number;
  /** Largest inbound frame (and polling request body). */
  maxPayload: number;
  /** Origins allowed to long-poll from a browser (CORS_ORIGINS; `*` for any). */
  corsOrigins?: string[];
  /** Called for every event delivered on this node (chat activity tracking). */
  observe?(tenant: string, o: Extract<Outbound, { op: 'emit' }>): void;
}

export class Realtime {
  io: Server | undefined;
  private app: TemplatedApp | undefined;
  private readonly opts: RealtimeOptions;
  /** Sockets on this node by user topic, to (un)subscribe a user's every socket at once. */
  private readonly users = new Map<string, Set<Socket>>();
  private unsubscribe: Unsubscribe | undefined;
  /** Topics of sockets still long-polling (no websocket to subscribe yet), both ways. */
  private readonly pollingTopics = new Map<Socket, Set<string>>();
  private readonly pollingByTopic = new Map<string, Set<Socket>>();
  /** Fan-outs waiting for this node's delivery microtask, in order. */
  private pending: Array<[string, Outbound, Socket | undefined]> = [];

  constructor(opts: RealtimeOptions) {
    this.opts = opts;
  }

  /** A topic: namespace, tenant and audience, e.g. topic('/chat', 'acme', 'chat', id). */
  static topic(nsp: string, tenant: string, kind: string, id?: string): string {
    return id === undefined ? `${nsp}${SEP}${tenant}${SEP}${kind}` : `${nsp}${SEP}${tenant}${SEP}${kind}${SEP}${id}`;
  }

  static parse(topic: string): { nsp: string; tenant: string; kind: string; id: string | undefined } {
    const [nsp, tenant, kind, id] = topic.split(SEP);
    return { nsp, tenant, kind, id };
  }

  attach(app: TemplatedApp): Server {
    this.app = app;
    const cluster = this.opts.clusterNodeId !== undefined;
    const origins = this.opts.corsOrigins ?? [];
    const io = new Server({
      path: '/socket.io',
      transports: cluster ? ['websocket'] : ['polling', 'websocket'],
      serveClient: false,
      ...(origins.length > 0 ? { cors: { origin: origins.includes('*') ? '*' : origins } } : {}),
      maxHttpBufferSize: this.opts.maxPayload,
      // A client that never names a namespace is dropped quickly.
      connectTimeout: 10_000,
      // Cluster mode: socket.io's own rooms, fetchSockets and serverSideEmit span every node.
      ...(this.opts.clusterNodeId !== undefined ? { adapter: busAdapter(this.opts.bus) } : {}),
    });
    io.attachApp(app, { maxBackpressure: this.opts.maxBackpressure } as never);
    if (cluster) refusePolling(io, this.opts.logger, ['/', NS_CHAT, NS_COMMUNITY]);
    // Only the two channels exist; the default namespace refuses everyone.
    io.of('/').use((_socket, next) => next(new Error('connect to /chat or /community-chat')));
    this.io = io;
    const self = this.opts.clusterNodeId;
    if (self !== undefined) {
      this.unsubscribe = this.opts.bus.subscribe('rt.*', (event, subject) => {
        const o = event as Outbound;
        if (o.n !== self) this.receive(subject.slice(3), o);
      });
    }
    return io;
  }

  private send(tenant: string, o: Outbound, except?: Socket): void {
    if (this.pending.length === 0) queueMicrotask(() => this.drain());
    this.pending.push([tenant, o, except]);
    if (this.opts.clusterNodeId === undefined) return;
    try {
      this.opts.bus.publish(`rt.${tenant}`, { ...o, n: this.opts.clusterNodeId });
    } catch (err) {
      // The bus is closing with the node: the other nodes' clients reconnect and replay by seq.
      this.opts.logger.warn({ err, tenant }, 'realtime fan-out not published on the bus');
    }
  }

  private drain(): void {
    const batch = this.pending;
    this.pending = [];
    for (const [tenant, o, except] of batch) this.receive(tenant, o, except);
  }

  /**
   * Sends `ev` to every socket subscribed to one of `to`, on every node, except `except` (the
   * socket that sent what this announces: its ack already carries it).
   */
  emit(tenant: string, to: string[], ev: string, data: unknown, except?: Socket): void {
    this.send(tenant, { op: 'emit', to, ev, d: data }, except);
  }

  /** Subscribes every socket of a user (on every node) to a topic. */
  subscribeUser(tenant: string, userTopic: string, topic: string): void {
    this.send(tenant, { op: 'sub', user: userTopic, topic });
  }

  unsubscribeUser(tenant: string, userTopic: string, topic: string): void {
    this.send(tenant, { op: 'unsub', user: userTopic, topic });
  }

  /** Publishes to this node's subscribers only (for events every node receives by itself). */
  publishLocal(to: string[], ev: string, data: unknown, except?: Socket): void {
    if (!this.app) return;
    const json = JSON.stringify([ev, data]);
    const skip = except?.connected ? wsOf(except) : undefined;
    for (const topic of to) {
      const nsp = topic.slice(0, topic.indexOf(SEP));
      // Engine.IO message (4) carrying a Socket.IO EVENT (2) for the namespace.
      const frame = `42${nsp},${json}`;
      const polling = this.pollingByTopic.get(topic);
      if (polling) for (const s of polling) if (s !== except) s.emit(ev, data);
      if (skip) {
        try {
          skip.publish(topic, frame, false);
          continue;
        } catch {
          // The sender closed meanwhile: everyone else still gets it below.
        }
      }
      this.app.publish(topic, frame, false);
    }
  }

  hasSubscribers(topic: string): boolean {
    return !!this.app && (this.app.numSubscribers(topic) > 0 || this.pollingByTopic.has(topic));
  }

  join(socket: Socket, topic: string): void {
    if (!socket.connected) return;
    const ws = wsOf(socket);
    if (!ws) {
      this.pollingJoin(socket, topic);
      return;
    }
    try {
      ws.subscribe(topic);
    } catch {
      // The websocket closed between the check and the call: nothing to subscribe.
    }
  }

  leave(socket: Socket, topic: string): void {
    if (!socket.connected) return;
    const polled = this.pollingTopics.get(socket);
    if (polled) {
      polled.delete(topic);
      this.pollingLeave(socket, topic);
      return;
    }
    try {
      wsOf(socket)?.unsubscribe(topic);
    } catch {
      // already closed
    }
  }

  private pollingJoin(socket: Socket, topic: string): void {
    let topics = this.pollingTopics.get(socket);
    if (!topics) {
      this.pollingTopics.set(socket, (topics = new Set()));
      // engine.io emits `upgrade` right before it flushes what was queued for polling, so nothing
      // published after this is missed, and nothing goes out twice.
      socket.conn.once('upgrade', () => this.upgraded(socket));
      socket.once('disconnect', () => this.pollingForget(socket));
    }
    topics.add(topic);
    let sockets = this.pollingByTopic.get(topic);
    if (!sockets) this.pollingByTopic.set(topic, (sockets = new Set()));
    sockets.add(socket);
  }

  private pollingLeave(socket: Socket, topic: string): void {
    const sockets = this.pollingByTopic.get(topic);
    if (!sockets) return;
    sockets.delete(socket);
    if (sockets.size === 0) this.pollingByTopic.delete(topic);
  }

  private pollingForget(socket: Socket): Set<string> | undefined {
    const topics = this.pollingTopics.get(socket);
    if (!topics) return undefined;
    this.pollingTopics.delete(socket);
    for (const t of topics) this.pollingLeave(socket, t);
    return topics;
  }

  /** A polling socket moved to websocket: its websocket takes over its topics. */
  private upgraded(socket: Socket): void {
    const topics = this.pollingForget(socket);
    const ws = wsOf(socket);
    if (!topics || !ws || !socket.connected) return;
    for (const t of topics) {
      try {
        ws.subscribe(t);
      } catch {
        return; // closed meanwhile
      }
    }
  }

  /** Registers a socket under its user topic (and subscribes it). */
  addUserSocket(userTopic: string, socket: Socket): void {
    let set = this.users.get(userTopic);
    if (!set) this.users.set(userTopic, (set = new Set()));
    set.add(socket);
    this.join(socket, userTopic);
  }

  removeUserSocket(userTopic: string, socket: Socket): void {
    const set = this.users.get(userTopic);
    if (!set) return;
    set.delete(socket);
    if (set.size === 0) this.users.delete(userTopic);
  }

  localSockets(userTopic: string): ReadonlySet<Socket> {
    return this.users.get(userTopic) ?? new Set();
  }

  private receive(tenant: string, o: Outbound, except?: Socket): void {
    try {
      if (o.op === 'emit') {
        this.publishLocal(o.to, o.ev, o.d, except);
        this.opts.observe?.(tenant, o);
        return;
      }
      const set = this.users.get(o.user);
      if (!set) return;
      for (const s of set) {
        if (o.op === 'sub') this.join(s, o.topic);
        else this.leave(s, o.topic);
      }
    } catch (err) {
      this.opts.logger.error({ err, tenant }, 'realtime delivery failed');
    }
  }

  async close(): Promise<void> {
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    this.users.clear();
    this.pollingTopics.clear();
    this.pollingByTopic.clear();
    if (this.io) await this.io.close();
    this.io = undefined;
  }
}
