// The README's quick start, run as written (the shell block between its quickstart markers) with
// curl and jq against a server on a fresh DATA_DIR: it must reach a scan, a settled tab and a chat
// message, so the first thing a newcomer copies cannot drift from what the server does.
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { startTestApp } from '../helpers/app.js';

const root = fileURLToPath(new URL('../..', import.meta.url));

t.test('README quick start - runs as written and reaches a scan, a settled tab and a chat message', async (t) => {
  for (const tool of ['curl', 'jq']) {
    if (spawnSync('sh', ['-c', `command -v ${tool}`]).status !== 0) {
      t.fail(`${tool} is missing: install the Debian package ${tool} (.ci/run does)`);
      return;
    }
  }
  const readme = readFileSync(`${root}/README.md`, 'utf8');
  const block = /<!-- quickstart:begin -->\n```sh\n([\s\S]*?)\n```\n<!-- quickstart:end -->/.exec(readme)?.[1];
  t.ok(block, 'the README has the quick start block');
  const app = await startTestApp(t);
  // Not spawnSync: the server runs in this process and must keep answering.
  const child = spawn('bash', ['-e', '-o', 'pipefail', '-c', block!], { env: { ...process.env, BASE: app.url }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (c) => (out += c));
  child.stderr.on('data', (c) => (err += c));
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  const status = await new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  clearTimeout(timer);
  t.equal(status, 0, `the block exits 0 (stderr: ${err.slice(-500)})`);
  t.match(out, /"success": true,\s*"status": "checked_in"/, 'the first scan admits');
  t.match(out, /"success": false,\s*"reason": "already_checked_in"/, 'the second is denied');
  t.match(out, /"status": "closed",\s*"changeDue": 3.2/, 'the tab is settled with change due');
  t.match(out, /"seq": 1,\s*"threadId": "d:[0-9a-f]{24}:[0-9a-f]{24}",\s*"text": "Doors open at 18:30."/, 'the chat message is sent');
});
