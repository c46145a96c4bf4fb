// A long loop of small synchronous steps (a visit of every organisation) gives the event loop back
// once a slice has passed, so requests wait at most about one slice behind it, however many steps.
import { setImmediate as nextTurn } from 'node:timers/promises';

/** Answers a function to await between steps: a new event loop turn once `sliceMs` have passed. */
export function timeSlicer(sliceMs = 5): () => Promise<void> | undefined {
  let since = performance.now();
  return () => {
    if (performance.now() - since < sliceMs) return undefined;
    return nextTurn().then(() => {
      since = performance.now();
    });
  };
}
