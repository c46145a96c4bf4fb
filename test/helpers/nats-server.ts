// Starts a real nats-server (Debian package nats-server) for a test file: JetStream on, a temp
// store dir, loopback only, a free port. Tests that need NATS fail, never skip, when it is missing.
import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { connect as tcpConnect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import type { Test } from 'tap';

export interface NatsServer {
  url: string;
  port: number;
  /** Process id of the running server (changes on restart). */
  readonly pid: number | undefined;
  /** JetStream store directory (removed by stop()). */
  storeDir: string;
  stop(): Promise<void>;
  /** Stops the server and starts it again on the same port and store dir. */
  restart(): Promise<void>;
}

export interface StartNatsServerOptions {
  /** Path of the binary; default: findNatsServer(). */
  bin?: string;
  /** Milliseconds to wait for the server to accept connections. Default 10000. */
  readyTimeoutMs?: number;
}

const NOT_FOUND =
  'nats-server binary not found: install the Debian package nats-server (apt-get install -y nats-server)';

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The nats-server binary on PATH, else in /usr/sbin or /usr/bin (where Debian puts it). */
export function findNatsServer(): string | undefined {
  const dirs = (process.env.PATH ?? '').split(delimiter).filter((d) => d.length > 0);
  for (const dir of [...dirs, '/usr/sbin', '/usr/bin', '/usr/local/bin']) {
    const candidate = join(dir, 'nats-server');
    if (isExecutable(candidate)) return candidate;
  }
  return undefined;
}

/** A port nobody listens on right now. Another process may take it before we do: callers retry. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr !== null ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

// Servers still running when the test process exits (a crash, a bail out) are killed with it.
const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = tcpConnect({ host: '127.0.0.1', port });
    sock.once('connect', () => {
      sock.destroy();
      resolve(true);
    });
    sock.once('error', () => resolve(false));
  });
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

class PortInUseError extends Error {}

/** Spawns the server and resolves once it accepts TCP connections; rejects if it exits first. */
async function launch(
  bin: string,
  port: number,
  storeDir: string,
  readyTimeoutMs: number,
): Promise<ChildProcess> {
  const args = ['-js', '-sd', storeDir, '-a', '127.0.0.1', '-p', String(port)];
  const child = spawn(bin, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  running.add(child);
  let log = '';
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (chunk: string) => {
    log = (log + chunk).slice(-4000);
  });
  let exited: string | undefined;
  child.once('error', (err) => {
    exited = `spawn failed: ${err.message}`;
  });
  child.once('exit', (code, signal) => {
    running.delete(child);
    exited ??= `exited with ${signal ?? `code ${code}`}`;
  });
  const deadline = Date.now() + readyTimeoutMs;
  for (;;) {
    if (exited !== undefined) {
      const msg = `nats-server on port ${port} ${exited}\n${log}`;
      throw /address already in use/i.test(log) ? new PortInUseError(msg) : new Error(msg);
    }
    if (await canConnect(port)) {
      // Our child owns the port only if it is still alive (another process could answer).
      if (exited === undefined) return child;
      continue;
    }
    if (Date.now() > deadline) {
      await terminate(child);
      throw new Error(`nats-server on port ${port} not ready after ${readyTimeoutMs} ms\n${log}`);
    }
    await sleep(25);
  }
}

/** SIGTERM, and SIGKILL if it has not exited within 5 s. Resolves when the process is gone. */
async function terminate(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const gone = new Promise<void>((r) => child.once('exit', () => r()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
  await gone;
  clearTimeout(timer);
  running.delete(child);
}

export async function startNatsServer(opts: StartNatsServerOptions = {}): Promise<NatsServer> {
  const bin = opts.bin ?? findNatsServer();
  if (bin === undefined || !isExecutable(bin)) throw new Error(NOT_FOUND);
  const readyTimeoutMs = opts.readyTimeoutMs ?? 10_000;
  const storeDir = await mkdtemp(join(tmpdir(), 'nats-test-'));

  let child: ChildProcess | undefined;
  let port = 0;
  try {
    for (let attempt = 1; ; attempt++) {
      port = await freePort();
      try {
        child = await launch(bin, port, storeDir, readyTimeoutMs);
        break;
      } catch (err) {
        if (!(err instanceof PortInUseError) || attempt >= 5) throw err;
      }
    }
  } catch (err) {
    await rm(storeDir, { recursive: true, force: true });
    throw err;
  }

  let stopped = false;
  return {
    url: `nats://127.0.0.1:${port}`,
    port,
    storeDir,
    get pid() {
      return child?.pid;
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      if (child) await terminate(child);
      await rm(storeDir, { recursive: true, force: true });
    },
    async restart() {
      if (stopped) throw new Error('nats-server was stopped');
      if (child) await terminate(child);
      child = undefined;
      // The port was ours a moment ago; retry briefly in case the OS has not released it.
      for (let attempt = 1; ; attempt++) {
        try {
          child = await launch(bin, port, storeDir, readyTimeoutMs);
          return;
        } catch (err) {
          if (!(err instanceof PortInUseError) || attempt >= 20) throw err;
          await sleep(100);
        }
      }
    },
  };
}

/** Opens client connections to `server`, each closed when `t` ends. */
export function natsClients(t: Test, server: NatsServer): () => Promise<NatsConnection> {
  const conns: NatsConnection[] = [];
  t.teardown(async () => {
    for (const nc of conns) await nc.close();
  });
  return async () => {
    const nc = await connect({ servers: server.url, noAsyncTraces: true });
    conns.push(nc);
    return nc;
  };
}
