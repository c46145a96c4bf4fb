// How busy this thread's event loop has been lately, for background work that yields to requests
// (the door's write-behind, actors/scanner/door-backlog.ts). Every request of every tenant runs on
// this loop, so its utilization is the foreground load that background work should not add to.
import { performance } from 'node:perf_hooks';

/** Reads the loop's utilization (0–1) since the previous read, over windows of at least `minWindowMs`. */
export type LoopLoad = () => number;

export function loopLoad(minWindowMs = 20): LoopLoad {
  let mark = performance.eventLoopUtilization();
  let at = performance.now();
  let last = 0;
  return () => {
    const now = performance.now();
    // Several readers in one window share its figure (a shorter window is mostly the caller itself).
    if (now - at >= minWindowMs) {
      const current = performance.eventLoopUtilization();
      last = performance.eventLoopUtilization(current, mark).utilization;
      mark = current;
      at = now;
    }
    return last;
  };
}
