// Which nodes are alive: every node publishes a heartbeat on core NATS at a fixed interval, and a
// node not heard from for three intervals is gone. Only a hint for placing unowned tenants and for
// giving up early on a request to a dead owner; who owns what is decided by the leases alone.
import type { NatsConnection, Subscription } from '@nats-io/transport-node';

export class Membership {
  private readonly seen = new Map<string, number>();
  private readonly sub: Subscription;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly nc: NatsConnection,
    private readonly subject: string,
    readonly self: string,
    private readonly intervalMs: number,
  ) {
    this.sub = nc.subscribe(subject, {
      callback: (err, msg) => {
        if (err) return;
        const id = msg.string();
        if (id === '') return;
        if (id.startsWith('-')) this.seen.delete(id.slice(1));
        else this.seen.set(id, Date.now());
      },
    });
    this.timer = setInterval(() => this.beat(), intervalMs);
    this.timer.unref();
    this.beat();
  }

  private beat(): void {
    try {
      this.nc.publish(this.subject, this.self);
    } catch {
      // Disconnected or closing: the next beat after the reconnect tells the others.
    }
  }

  /** Heard from within three intervals (this node always counts). */
  isLive(id: string): boolean {
    if (id === this.self) return true;
    const at = this.seen.get(id);
    return at !== undefined && Date.now() - at <= 3 * this.intervalMs;
  }

  /** Every live node, this one included. */
  live(): string[] {
    const out = [this.self];
    for (const id of this.seen.keys()) if (id !== this.self && this.isLive(id)) out.push(id);
    return out;
  }

  /** Tells the others this node is leaving (a clean stop), then stops beating. */
  close(): void {
    clearInterval(this.timer);
    try {
      this.nc.publish(this.subject, '-' + this.self);
    } catch {
      // already disconnected
    }
    try {
      this.sub.unsubscribe();
    } catch {
      // already closed
    }
  }
}
