// A module's background job: run every `everyMs` (the first time after `firstMs`), on timers that
// never keep the process alive, its failures logged, stopped with the module. Each node has its own
// set (deps.periodic, created by edge/app.ts and stopped once when the node closes), so test apps
// side by side do not share them.

/** One node's background jobs, by name. */
export class PeriodicJobs {
  private readonly timers = new Map<string, NodeJS.Timeout>();

  constructor(private readonly logger: { warn(obj: unknown, msg: string): void }) {}

  /** Starts `name`, replacing a job of that name. */
  start(name: string, job: () => Promise<unknown>, everyMs: number, firstMs = everyMs): void {
    this.stop(name);
    const run = () => void job().catch((err: unknown) => this.logger.warn({ err }, `${name} failed`));
    const first = setTimeout(() => {
      run();
      const repeat = setInterval(run, everyMs);
      repeat.unref();
      this.timers.set(name, repeat);
    }, firstMs);
    first.unref();
    this.timers.set(name, first);
  }

  stop(name: string): void {
    const timer = this.timers.get(name);
    if (timer) clearTimeout(timer);
    this.timers.delete(name);
  }

  /** Every job (the node closes). */
  stopAll(): void {
    for (const name of [...this.timers.keys()]) this.stop(name);
  }
}

export function startPeriodic(deps: { readonly periodic: PeriodicJobs }, name: string, job: () => Promise<unknown>, everyMs: number, firstMs = everyMs): void {
  deps.periodic.start(name, job, everyMs, firstMs);
}

export function stopPeriodic(deps: { readonly periodic: PeriodicJobs }, name: string): void {
  deps.periodic.stop(name);
}
