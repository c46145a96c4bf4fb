// A real server in its own process, as production runs it (the built entry, a minimal environment
// with nothing of the test runner's), for tests that kill it: started on port 0, ready once it logs
// "listening", killed with SIGKILL in teardown if still alive.
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';

export interface ServerProcess {
  proc: ChildProcess;
  url: string;
  exited: Promise<void>;
}

interface Teardown {
  teardown(fn: () => unknown): void;
}

export async function startServerProcess(t: Teardown, entry: string, dataDir: string, env: Record<string, string>): Promise<ServerProcess> {
  const proc = spawn(
    process.execPath,
    [entry],
    {
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, LOG_LEVEL: 'info', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  t.teardown(() => {
    if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL');
  });
  const exited = new Promise<void>((r) => proc.once('exit', () => r()));
  let out = '';
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no "listening" within 60 s: ${out.slice(-2000)}`)), 60_000);
    createInterface({ input: proc.stdout! }).on('line', (l) => {
      out += l + '\n';
      if (l.includes('"msg":"listening"')) {
        clearTimeout(timer);
        resolve(JSON.parse(l).port);
      }
    });
    proc.stderr!.on('data', (c: Buffer) => (out += c.toString()));
    proc.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`server exited (${code ?? signal}) before listening: ${out.slice(-2000)}`));
    });
  });
  return { proc, url: `http://127.0.0.1:${port}`, exited };
}

/** SIGKILL, resolved once the process is gone. */
export async function kill9(server: ServerProcess): Promise<void> {
  server.proc.kill('SIGKILL');
  await server.exited;
}
