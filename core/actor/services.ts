// Ports: the services a node provides to its actors (outbox, scheduler, door backlog, payments,
// fan-out to sockets, ...), as ONE explicit object. edge/app.ts builds it once per node, hands it
// to the ActorRuntime, and every ActorContext and ActivationContext carries it as `ctx.services`;
// modules reach the same object as `deps.services`. Actor kinds are plain objects shared by every
// node in a process (tests start several), so a port is never kept in a module-level map keyed on
// a Store or AppDeps: what differs per node travels in the context.
//
// A port whose type lives in core/ is declared here. An area declares its own port next to its
// type, by declaration merging (core/ never imports actors/):
//
//   // actors/scanner/door-backlog.ts
//   declare module '../../core/actor/services.js' {
//     interface NodeServices {
//       /** The door's read barrier and background materializer. */
//       readonly doorBacklog: DoorBacklog;
//     }
//   }
//
// Once declared, edge/app.ts does not compile until it provides the port, and an actor reads it
// as `ctx.services.doorBacklog`: no lookup, no default. Nothing falls back silently: a node
// provides every port, and a bare runtime (unit tests, tools) gets `someServices({...})`, whose
// missing ports throw, naming themselves, when used.
//
// State a module keeps for itself per node (a cache, a gate, an unsubscriber) is not a port: it
// lives in the closure of the module's `perNode(deps)` (edge/deps.ts, Module), which the app calls
// once per node; never in a map keyed on AppDeps or Store. A node resource that several files reach
// through `deps` (the event media file store, edge/routes/events/media.ts) is a port, made lazily.
import type { OutboxProvider } from '../outbox.js';
import type { Scheduler } from '../scheduler.js';
import type { WebhookPort } from '../webhooks/port.js';

export interface NodeServices {
  /** Email, SMS and print messages (default `local`: recorded in the store). */
  readonly outbox: OutboxProvider;
  /** The node's durable timers (core/scheduler.ts): one per node, started and stopped by the node. */
  readonly scheduler: Scheduler;
  /** Webhook events queued in a write's own batch (core/webhooks/port.ts). */
  readonly webhooks: WebhookPort;
}

/**
 * The ports given; any other port throws when it is used, naming itself. For a runtime that runs
 * a few actors outside a node (unit tests, tools): a port they never touch need not be built, and
 * one they do touch is never replaced by a default.
 */
export function someServices(given: Partial<NodeServices> = {}): NodeServices {
  return new Proxy(given, {
    get(target, name, receiver) {
      if (typeof name === 'symbol' || name in target) return Reflect.get(target, name, receiver);
      // Promise resolution and inspection probe `then` and friends: they are not ports.
      if (name === 'then' || name === 'toJSON' || name === 'constructor') return undefined;
      throw new Error(`the port ${name} was not provided to this runtime (core/actor/services.ts)`);
    },
  }) as NodeServices;
}
