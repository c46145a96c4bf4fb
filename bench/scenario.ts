// What bench/run.ts runs: a named, described measurement that prints its own table and returns
// what it wrote to bench/results/<name>.json.
export interface Scenario {
  /** Also the results file name and the command-line name: kebab-case. */
  readonly name: string;
  readonly description: string;
  run(): Promise<unknown>;
}

/** A positive integer from the environment, or the default. */
export function envInt(name: string, fallback: number): number {
  const raw = process.env[name];
  const n = raw === undefined || raw === '' ? NaN : Number(raw);
  return Number.isInteger(n) && n > 0 ? n : fallback;
}
