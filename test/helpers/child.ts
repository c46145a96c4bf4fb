// Runs a TypeScript fixture in a child process (through tsx), reads its stdout
// line by line, and can kill it with SIGKILL: for crash-safety tests.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createInterface } from 'node:readline';

export interface Child {
  proc: ChildProcess;
  lines: string[];
  /** Resolves when `predicate` holds for the lines read so far. */
  waitFor(predicate: (lines: string[]) => boolean, timeoutMs?: number): Promise<void>;
  kill9(): Promise<void>;
  exited: Promise<number | null>;
  stderr(): string;
}

export function runFixture(fixture: string, args: string[] = [], env: Record<string, string> = {}): Child {
  // In the transpiled test tree (scripts/test.mjs) a fixture's `.js` twin runs as it is; a TypeScript
  // fixture goes through tsx, as the test running it does.
  const script = import.meta.url.endsWith('.js') && fixture.endsWith('.ts') && existsSync(fixture.slice(0, -3) + '.js') ? fixture.slice(0, -3) + '.js' : fixture;
  const loader = script.endsWith('.ts') ? ['--import', 'tsx'] : [];
  const proc = spawn(process.execPath, [...loader, script, ...args], {
    // Routes compile and query workers start on first use in a test's child, as in startTestApp.
    env: { COMPILE_ROUTES_AT_START: 'false', QUERY_WARM_AT_START: 'false', ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  let err = '';
  const waiters: Array<() => void> = [];
  createInterface({ input: proc.stdout! }).on('line', (l) => {
    lines.push(l);
    for (const w of waiters.splice(0)) w();
  });
  proc.stderr!.on('data', (c: Buffer) => {
    err += c.toString();
  });
  const exited = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)));
  return {
    proc,
    lines,
    stderr: () => err,
    exited,
    waitFor(predicate, timeoutMs = 30_000) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`child did not reach the expected state in ${timeoutMs} ms; stderr: ${err.slice(-2000)}`)),
          timeoutMs,
        );
        const check = () => {
          if (predicate(lines)) {
            clearTimeout(timer);
            resolve();
          } else if (proc.exitCode !== null) {
            clearTimeout(timer);
            reject(new Error(`child exited with ${proc.exitCode}; stderr: ${err.slice(-2000)}`));
          } else waiters.push(check);
        };
        check();
      });
    },
    async kill9() {
      if (proc.exitCode === null && proc.signalCode === null) {
        proc.kill('SIGKILL');
        await exited;
      }
    },
  };
}
