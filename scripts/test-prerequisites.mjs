// `npm test` runs this before tap: the NATS tests need a real `nats-server` and the browser test a
// headless Chromium, neither of which npm installs. As root on a Debian-like machine (a fresh CI box,
// a container) the missing ones are installed with apt-get, as .ci/run does; otherwise this stops at
// once with the one command to run, rather than after minutes of tests failing one by one.
import { spawnSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

const APT = ['nats-server', 'chromium'];

function executable(path) {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

// The places the tests look: test/helpers/nats-server.ts (PATH, then Debian's directories) and
// test/reference/browser.test.ts (CHROMIUM_PATH, else Debian's /usr/bin/chromium).
function natsServer() {
  const dirs = (process.env.PATH ?? '').split(delimiter).filter(Boolean);
  return [...dirs, '/usr/sbin', '/usr/bin', '/usr/local/bin'].some((d) => executable(join(d, 'nats-server')));
}
function chromium() {
  return executable(process.env.CHROMIUM_PATH ?? '/usr/bin/chromium');
}

function missing() {
  return [natsServer() ? undefined : 'nats-server', chromium() ? undefined : 'chromium'].filter(Boolean);
}

let absent = missing();
if (absent.length === 0) process.exit(0);

const command = `apt-get update && apt-get install -y ${APT.join(' ')}`;
const root = process.getuid?.() === 0;
if (root && spawnSync('sh', ['-c', 'command -v apt-get'], { stdio: 'ignore' }).status === 0) {
  process.stderr.write(`npm test: ${absent.join(' and ')} missing; installing: ${command}\n`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const update = spawnSync('apt-get', ['update', '-qq'], { stdio: 'inherit', env });
  if (update.status !== 0) process.stderr.write('npm test: apt-get update failed; trying to install anyway\n');
  spawnSync('apt-get', ['install', '-y', '-qq', '--no-install-recommends', ...APT], { stdio: 'inherit', env });
  absent = missing();
  if (absent.length === 0) process.exit(0);
}

process.stderr.write(
  `npm test: the tests need ${absent.join(' and ')}, which ${absent.length > 1 ? 'are' : 'is'} not installed. Run:\n\n` +
    `  ${root ? '' : 'sudo sh -c "'}${command}${root ? '' : '"'}\n\n` +
    (absent.includes('chromium') ? 'or set CHROMIUM_PATH to a Chromium binary. ' : '') +
    'Then run npm test again.\n',
);
process.exit(1);
