// socket.io across nodes: a cluster adapter on the bus (NATS in cluster mode). socket.io-adapter's
// ClusterAdapterWithHeartbeat supplies the protocol (broadcast with rooms and exceptions, joining
// and leaving rooms, disconnecting, fetchSockets, serverSideEmit, heartbeats that notice a dead
// node); this file only carries its messages. Each namespace has one subject for messages to every
// node and one per node for answers:
//
//   <prefix>.<nsp>            every adapter of the namespace listens
//   <prefix>.<nsp>.r.<uid>    answers to the adapter `uid` (fetchSockets, serverSideEmit acks)
//
// The bus carries JSON, and socket.io packets may hold binary, so a message travels as msgpack
// in base64. The chat fan-out of this service does not need this adapter (edge/sockets/realtime.ts
// publishes to uWS topics and relays on the bus itself); it makes socket.io's own API correct
// cluster-wide: `io.to(room).emit`, `fetchSockets`, `serverSideEmit` see every node.
import { ClusterAdapterWithHeartbeat, type ClusterAdapterOptions, type ClusterMessage, type ClusterResponse } from 'socket.io-adapter';
import type { Bus, Unsubscribe } from '../core/bus/bus.js';
import { decode, encode } from '../core/cluster/codec.js';

export interface BusAdapterOptions extends ClusterAdapterOptions {
  /** First token of the adapter's subjects (default `sio`). */
  prefix?: string;
}

function wrap(value: unknown): { d: string } {
  return { d: Buffer.from(encode(value)).toString('base64') };
}

function unwrap<T>(event: unknown): T {
  return decode<T>(Buffer.from((event as { d: string }).d, 'base64'));
}

/** A subject token for a namespace name (`/chat` → `L2NoYXQ`). */
function nspToken(name: string): string {
  return Buffer.from(name, 'utf8').toString('base64url') || '_';
}

/** socket.io-adapter types the namespace as `any`; what we read of it. */
type Namespace = { name: string };

export class BusAdapter extends ClusterAdapterWithHeartbeat {
  private readonly subject: string;
  private readonly unsubscribes: Unsubscribe[] = [];

  constructor(
    nsp: Namespace,
    private readonly bus: Bus,
    opts: BusAdapterOptions = {},
  ) {
    super(nsp, opts);
    this.subject = `${opts.prefix ?? 'sio'}.${nspToken(nsp.name)}`;
    this.unsubscribes.push(
      bus.subscribe(this.subject, (event) => this.onMessage(unwrap<ClusterMessage>(event))),
      bus.subscribe(`${this.subject}.r.${this.uid}`, (event) => this.onResponse(unwrap<ClusterResponse>(event))),
    );
  }

  protected override doPublish(message: ClusterMessage): Promise<string> {
    this.bus.publish(this.subject, wrap(message));
    return Promise.resolve('');
  }

  protected override doPublishResponse(requesterUid: string, response: ClusterResponse): Promise<void> {
    this.bus.publish(`${this.subject}.r.${requesterUid}`, wrap(response));
    return Promise.resolve();
  }

  override close(): void {
    try {
      super.close();
    } catch {
      // the bus is closing with the node: the others notice the missing heartbeats
    }
    for (const u of this.unsubscribes.splice(0)) u();
  }
}

/**
 * What `new Server({ adapter })` takes: socket.io calls it with `new` once per namespace, so it is
 * a plain function (never an arrow) returning the adapter.
 */
export function busAdapter(bus: Bus, opts: BusAdapterOptions = {}): (nsp: Namespace) => BusAdapter {
  return function createBusAdapter(nsp: Namespace) {
    return new BusAdapter(nsp, bus, opts);
  };
}
