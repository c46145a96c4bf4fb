// The bus entry point: in-process unless NATS_URL is set (DESIGN: Cluster mode). The NATS client
// is imported only when it is used, so a single node never loads it.
import type { Logger } from '../log.js';
import type { Bus } from './bus.js';
import { InProcessBus } from './in-process.js';

export type { AskOptions, Bus, Listener, Responder, Unsubscribe } from './bus.js';
export { InvalidSubjectError } from './subject.js';

export interface CreateBusOptions {
  /** NATS server URL (or a comma-separated list); when absent the bus is in-process. */
  natsUrl?: string;
  logger?: Logger;
}

export async function createBus(opts: CreateBusOptions = {}): Promise<Bus> {
  if (opts.natsUrl) {
    const { NatsBus } = await import('./nats.js');
    return NatsBus.connect(opts.natsUrl, { logger: opts.logger });
  }
  return new InProcessBus({ logger: opts.logger });
}
