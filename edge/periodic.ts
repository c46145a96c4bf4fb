// A module's background job: run every `everyMs` (the first time after `firstMs`), on timers that
// never keep the process alive, its failures logged, stopped with the module. One set of jobs per
// app (its deps), so test apps side by side do not share them.
import type { AppDeps } from './deps.js';

const jobs = new WeakMap<AppDeps, Map<string, NodeJS.Timeout>>();

export function startPeriodic(deps: AppDeps, name: string, job: () => Promise<unknown>, everyMs: number, firstMs = everyMs): void {
  stopPeriodic(deps, name);
  let mine = jobs.get(deps);
  if (!mine) jobs.set(deps, (mine = new Map()));
  const timers = mine;
  const run = () => void job().catch((err: unknown) => deps.logger.warn({ err }, `${name} failed`));
  const first = setTimeout(() => {
    run();
    const repeat = setInterval(run, everyMs);
    repeat.unref();
    timers.set(name, repeat);
  }, firstMs);
  first.unref();
  timers.set(name, first);
}

export function stopPeriodic(deps: AppDeps, name: string): void {
  const timers = jobs.get(deps);
  const timer = timers?.get(name);
  if (timer) clearTimeout(timer);
  timers?.delete(name);
}
