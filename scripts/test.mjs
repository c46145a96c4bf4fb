// `npm test` (after test-prerequisites.mjs): runs every test file of test/ as its own node process,
// a few at once, from the transpiled tree (test-tree.mjs), and reports them as tap does: each
// file's TAP output as a subtest named for the file, then `# { total, pass, fail }` counting every
// assertion. `npm test -- test/x/y.test.ts ...` runs only those files.
//
// Why not tap's own runner: it starts each test process with its coverage/process-tracking and
// mocking module hooks, which Node 20 runs on a separate thread for every module load, and the
// hooks follow into every child server and query worker thread; on this suite that doubled the
// CPU per test file (18 vs 9 CPU-s for test/crm/leads.test.ts, most of it module loading). The
// test files themselves are plain node-tap tests: `npx tap test/x/y.test.ts` still runs one file
// through tap and tsx.
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { Parser } from 'tap-parser';
import { buildTree, root } from './test-tree.mjs';

const config = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).tap;
/** Test files run at once (package.json `tap.jobs`; TEST_JOBS overrides). */
const JOBS = Number(process.env.TEST_JOBS) || config.jobs || 2;
/** A file's own timeout (tap's TAP_TIMEOUT, seconds); a test may raise it with t.setTimeout. */
const TIMEOUT_S = config.timeout ?? 30;
/** A file still running after this long is killed and counted as failed, whatever it asked for. */
const HARD_LIMIT_MS = 20 * 60_000;
/** How long each file took in the last run on this machine: the longest start first. */
const DURATIONS = join(tmpdir(), 'bp-test-durations.json');
/** Test processes running now (killed with this runner). */
const running = new Set();

/** Test files (root-relative `.ts` paths): those named, or every `*.test.ts` under test/. */
function testFiles(args) {
  const cwd = process.env.INIT_CWD ?? process.cwd();
  const named = args.filter((a) => !a.startsWith('-')).map((a) => relative(root, join(cwd, a)));
  if (named.length > 0) return named;
  const out = [];
  const walk = (rel) => {
    for (const e of readdirSync(join(root, rel), { withFileTypes: true })) {
      const r = join(rel, e.name);
      if (e.isDirectory() && e.name !== 'helpers' && e.name !== 'fixtures') walk(r);
      else if (e.isFile() && e.name.endsWith('.test.ts')) out.push(r);
    }
  };
  walk('test');
  return out.sort();
}

/**
 * The longest files first, so that the last minutes do not wait on one long file started late:
 * by the durations of the last run here, else (a fresh machine) files that raise their timeout,
 * then files that start servers or NATS as processes, then the rest.
 */
function longestFirst(files) {
  let last = {};
  try {
    last = JSON.parse(readFileSync(DURATIONS, 'utf8'));
  } catch {
    // No earlier run here.
  }
  const guess = (f) => {
    const src = readFileSync(join(root, f), 'utf8');
    if (/\bt\.setTimeout\(/.test(src)) return 600_000;
    if (/startServerProcess\(|runFixture\(|startNatsServer\(|new TestCluster\(/.test(src)) return 60_000;
    return 0;
  };
  const weight = new Map(files.map((f) => [f, last[f] ?? guess(f)]));
  return [...files].sort((a, b) => weight.get(b) - weight.get(a));
}

function saveDurations(results) {
  let last = {};
  try {
    last = JSON.parse(readFileSync(DURATIONS, 'utf8'));
  } catch {
    // First run here.
  }
  for (const r of results) last[r.file] = r.ms;
  try {
    writeFileSync(DURATIONS, JSON.stringify(last));
  } catch {
    // Only a hint for the next run.
  }
}

/**
 * Counts a file's assertions as tap's summary does: every test point that is not a subtest's own
 * result line (a subtest is announced by its child parser before its closing test point).
 */
function countAsserts(parser, counts) {
  let subtestOpen = false;
  parser.on('child', (child) => {
    subtestOpen = true;
    countAsserts(child, counts);
  });
  parser.on('assert', (r) => {
    if (subtestOpen) {
      subtestOpen = false;
      return;
    }
    counts.total++;
    if (r.todo) counts.todo++;
    else if (r.skip) counts.skip++;
    else if (r.ok) counts.pass++;
    else counts.fail++;
  });
}

function runFile(tree, file, id) {
  return new Promise((resolve) => {
    const started = Date.now();
    const counts = { total: 0, pass: 0, fail: 0, skip: 0, todo: 0 };
    const parser = new Parser();
    countAsserts(parser, counts);
    let out = '';
    const proc = spawn(process.execPath, [file.replace(/\.ts$/, '.js')], {
      cwd: tree,
      env: { ...process.env, TAP: '1', TAP_CHILD_ID: String(id), TAP_JOB_ID: String(id % JOBS), TAP_TIMEOUT: String(TIMEOUT_S), TAP_BAIL: '0' },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    running.add(proc);
    const hard = setTimeout(() => proc.kill('SIGKILL'), HARD_LIMIT_MS);
    proc.stdout.on('data', (c) => {
      out += c;
      parser.write(c);
    });
    proc.on('close', (code, signal) => {
      running.delete(proc);
      clearTimeout(hard);
      parser.end();
      const ms = Date.now() - started;
      // A file that ended badly without a failing test point (a crash, a missing plan, killed):
      // one failure, so that it cannot pass unnoticed.
      const ended = code !== 0 && counts.fail === 0 ? `exited with ${signal ?? code}` : undefined;
      if (ended) {
        counts.total++;
        counts.fail++;
      }
      resolve({ file, out, ms, counts, ok: code === 0 && counts.fail === 0, ended });
    });
  });
}

function report(n, r) {
  const body = r.out
    .split('\n')
    .filter((l) => !l.startsWith('TAP version'))
    .map((l) => (l ? '    ' + l : l))
    .join('\n')
    .trimEnd();
  const lines = [`# Subtest: ${r.file}`, body];
  if (r.ended) lines.push(`    not ok - ${r.file} ${r.ended}`);
  lines.push(`${r.ok ? 'ok' : 'not ok'} ${n} - ${r.file} # time=${r.ms}ms`, '');
  process.stdout.write(lines.join('\n') + '\n');
}

const args = process.argv.slice(2);
const files = longestFirst(testFiles(args));
const tree = buildTree();
const started = Date.now();
const total = { total: 0, pass: 0, fail: 0, skip: 0, todo: 0 };
let next = 0;
let reported = 0;
let failedFiles = 0;
const results = [];
for (const sig of ['SIGINT', 'SIGTERM'])
  process.on(sig, () => {
    for (const p of running) p.kill('SIGKILL');
    process.exit(130);
  });

async function worker() {
  while (next < files.length) {
    const i = next++;
    const r = await runFile(tree, files[i], i + 1);
    for (const k of Object.keys(total)) total[k] += r.counts[k];
    if (!r.ok) failedFiles++;
    results.push(r);
    report(++reported, r);
  }
}
await Promise.all(Array.from({ length: Math.min(JOBS, files.length) }, worker));

saveDurations(results);
const summary = Object.entries(total)
  .filter(([k, v]) => k === 'total' || k === 'pass' || v > 0)
  .map(([k, v]) => `${k}: ${v}`)
  .join(', ');
process.stdout.write(`1..${files.length}\n# { ${summary} }\n# time=${Date.now() - started}ms\n`);
if (failedFiles > 0) process.stdout.write(`# ${failedFiles} of ${files.length} test files failed\n`);
process.exit(failedFiles > 0 || total.fail > 0 ? 1 : 0);
