// `npm start` as an operator runs it: builds when needed, serves on the embedded default store,
// answers /healthz, and stops cleanly on SIGTERM sent to npm (the script execs node, so the
// signal npm forwards reaches the server rather than a shell that would leave it orphaned).
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { tempDir } from '../helpers/app.js';
import { request } from '../helpers/http.js';

const root = fileURLToPath(new URL('../..', import.meta.url));

/** True while a process with this id exists. */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

t.test('npm start - builds, serves /healthz on LMDB in DATA_DIR, stops on SIGTERM sent to npm', async (t) => {
  const dataDir = tempDir(t);
  // Port 0: the server takes a free port and logs it. (A port found free beforehand can be taken
  // by another test's server during the seconds the build check and start-up take.)
  const env: Record<string, string> = { ...(process.env as Record<string, string>), PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, LOG_LEVEL: 'info' };
  delete env.JWT_SECRET;
  delete env.NATS_URL;
  // As an operator (or a container's CMD ["npm","start"]) runs it: the signal goes to npm's pid.
  const child = spawn('npm', ['start'], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (c) => (out += c));
  child.stderr.on('data', (c) => (out += c));
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  t.teardown(() => {
    if (child.exitCode === null) child.kill('SIGKILL');
  });
  const deadline = Date.now() + 120_000;
  let health;
  while (Date.now() < deadline) {
    const port = /"port":(\d+)[^\n]*"msg":"listening"/.exec(out)?.[1];
    if (port) health = await request(`http://127.0.0.1:${port}`, '/healthz').catch(() => undefined);
    if (health) break;
    if (child.exitCode !== null) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  t.equal(health?.status, 200, `served /healthz (output: ${out.slice(-500)})`);
  t.same(health?.body, { status: 'ok' });
  t.match(out, /JWT_SECRET is not set/, 'warns that the secret was generated');
  t.match(out, /"msg":"listening"/);
  const port = Number(/"port":(\d+)[^\n]*"msg":"listening"/.exec(out)?.[1]);
  const serverPid = Number(/"pid":(\d+)[^\n]*"msg":"listening"/.exec(out)?.[1]);
  t.ok(serverPid > 0 && serverPid !== child.pid, `the server runs in its own node process (${serverPid})`);
  child.kill('SIGTERM');
  t.equal(await exited, 0, 'npm exits 0 after SIGTERM');
  t.match(out, /"msg":"stopped"/, 'the server drained and stopped');
  for (let i = 0; i < 50 && alive(serverPid); i++) await new Promise((r) => setTimeout(r, 100));
  t.notOk(alive(serverPid), 'no node process is left behind');
  const after = await request(`http://127.0.0.1:${port}`, '/healthz', { timeoutMs: 2000 }).catch((e: Error) => e);
  t.ok(after instanceof Error, 'the port is closed');
});
