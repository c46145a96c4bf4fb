// What a typed client of an actor kind needs: one `ask`. Areas call each other's actors through it,
// from a route (the runtime) or from inside an actor (its context), so it lives below them all.
import type { ActorContext } from './runtime.js';

/** Anything that can ask an actor: the runtime, or an actor's own context (`ctx`). */
export interface Asker {
  ask<R = unknown>(tenant: string, kind: string, key: string, msg: unknown): Promise<R>;
}

/** An actor's context as an Asker (its asks stay within its own tenant). */
export function askerOf(ctx: ActorContext): Asker {
  return { ask: (_tenant, kind, key, msg) => ctx.ask(kind, key, msg) };
}
