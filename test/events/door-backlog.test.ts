// The door's read barrier as a mechanism (actors/scanner/door-backlog.ts), driven through its one
// dependency, the scanner's materialize step, over a real store: a reader far behind is served in
// steps no larger than the configured batch, with the event loop free between them; an event leaves
// the barrier only when a committed step saw its latest scan; a failed step keeps it behind.
import t from 'tap';
import { DoorBacklog, type MaterializeStep } from '../../actors/scanner/door-backlog.js';
import { LmdbStore } from '../../core/store/lmdb-store.js';
import { tempDir } from '../helpers/app.js';

/** A scanner stand-in: `behind` tickets pending up to scan `seq`; each step writes up to `max`. */
function door() {
  const d = { behind: 0, seq: 0, steps: [] as number[], fail: 0, answered: 0 };
  const materialize = async (_tenant: string, _event: string, max: number): Promise<MaterializeStep> => {
    d.steps.push(max);
    const seen = d.seq;
    const n = Math.min(max, d.behind);
    d.behind -= n;
    const left = d.behind;
    // The commit: other work may run before the step is answered.
    await new Promise((r) => setImmediate(r));
    if (d.fail > 0) {
      d.fail--;
      d.behind += n;
      throw new Error('commit failed');
    }
    d.answered++;
    return { left, seq: seen };
  };
  return { d, materialize };
}

/** Counts the event loop's turns until stopped: a callback that queues itself again each time the loop comes round. */
function loopTurns(): { readonly count: number; stop(): void } {
  let count = 0;
  let running = true;
  const spin = () => {
    count++;
    if (running) setImmediate(spin);
  };
  setImmediate(spin);
  return {
    get count() {
      return count;
    },
    stop: () => void (running = false),
  };
}

/** A backlog over a real store and the stand-in scanner, background paused, steps of 50. */
function barrier(t: Parameters<typeof tempDir>[0]) {
  const store = new LmdbStore({ path: tempDir(t), mapSizeGiB: 1 });
  t.teardown(() => store.close());
  const { d, materialize } = door();
  const backlog = new DoorBacklog(store, materialize, { materializeMs: 0, materializeBatch: 50 });
  t.teardown(() => backlog.close());
  return { d, backlog };
}

t.test('a read far behind settles in bounded steps, serving other work between them', async (t) => {
  const { d, backlog } = barrier(t);

  t.equal(backlog.settle('acme'), undefined, 'nothing behind: nothing to wait for');
  d.behind = 1_000;
  d.seq = 1_000;
  backlog.fellBehind('acme', 'ev1', 1_000);
  // Other work: one callback each time the event loop comes round.
  const turns = loopTurns();
  await backlog.settle('acme');
  turns.stop();
  const ticks = turns.count;
  t.equal(d.behind, 0, 'every ticket written');
  t.equal(d.steps.length, 20, '1,000 tickets in steps of 50');
  t.ok(d.steps.every((m) => m === 50), 'no step asks for more than the batch');
  t.ok(ticks >= 10, `timers ran between the steps (${ticks})`);
  t.equal(backlog.settle('acme'), undefined, 'caught up: the barrier is a lookup again');
  t.equal(backlog.settle('other'), undefined, 'another tenant never waited');
});

t.test('a read far behind does not wait out each commit: up to 4 steps unanswered, each asked in a turn of its own', async (t) => {
  const store = new LmdbStore({ path: tempDir(t), mapSizeGiB: 1 });
  t.teardown(() => store.close());
  let behind = 1_000;
  let unanswered = 0;
  let most = 0;
  let turns = loopTurns();
  let lastTurn = -1;
  let sameTurn = 0;
  // A scanner whose commits take 20 ms: one step at a time would take 20 of them (400 ms and more).
  const materialize = async (_tenant: string, _event: string, max: number): Promise<MaterializeStep> => {
    if (turns.count === lastTurn) sameTurn++;
    lastTurn = turns.count;
    most = Math.max(most, ++unanswered);
    const n = Math.min(max, behind);
    behind -= n;
    const left = behind;
    await new Promise((r) => setTimeout(r, 20));
    unanswered--;
    return { left, seq: 1_000 };
  };
  const backlog = new DoorBacklog(store, materialize, { materializeMs: 0, materializeBatch: 50 });
  t.teardown(() => backlog.close());
  backlog.fellBehind('acme', 'ev1', 1_000);
  const started = performance.now();
  await backlog.settle('acme');
  const took = performance.now() - started;
  turns.stop();
  t.equal(behind, 0, 'every ticket written');
  t.equal(most, 4, 'up to 4 steps unanswered at once');
  t.equal(sameTurn, 0, 'never two steps asked in the same turn: the loop serves other work between them');
  t.ok(took < 300, `settled in ${took.toFixed(0)} ms: 20 commits one after another take 400`);

  // Two readers of the same event far behind share the 4: the scanner never holds more.
  behind = 1_000;
  most = 0;
  turns = loopTurns();
  lastTurn = -1;
  backlog.fellBehind('acme', 'ev1', 1_000);
  await Promise.all([backlog.settle('acme'), backlog.settle('acme')]);
  turns.stop();
  t.equal(behind, 0, 'every ticket written again');
  t.ok(most <= 5, `two readers together keep at most 4 steps unanswered, and one each: ${most} (8 if each kept its own 4)`);
});

t.test('an event leaves the barrier only once a step that saw its latest scan has committed', async (t) => {
  const { d, backlog } = barrier(t);

  d.behind = 10;
  d.seq = 10;
  backlog.fellBehind('acme', 'ev1', 10);
  const reading = backlog.settle('acme')!;
  // A scan falls behind after the step saw the scanner, before its commit answered.
  d.behind += 1;
  d.seq = 11;
  backlog.fellBehind('acme', 'ev1', 11);
  await reading;
  t.equal(d.behind, 1, 'the first read did not wait for a scan acknowledged after it began');
  t.not(backlog.settle('acme'), undefined, 'but the event is still behind for the next read');
  await backlog.settle('acme');
  t.equal(d.behind, 0);
  t.equal(backlog.settle('acme'), undefined);

  // A failed step leaves the event behind; the read tries again.
  d.behind = 5;
  d.seq = 20;
  d.fail = 1;
  backlog.fellBehind('acme', 'ev1', 20);
  await backlog.settle('acme');
  t.equal(d.behind, 0, 'written on the second try');
  t.equal(backlog.settle('acme'), undefined);
});

t.test('the background waits while the event loop is busy, at most the longest wait, and readers never wait', async (t) => {
  const store = new LmdbStore({ path: tempDir(t), mapSizeGiB: 1 });
  t.teardown(() => store.close());
  const { d, materialize } = door();
  let use = 0.9;
  const settings = { materializeMs: 5, materializeBatch: 10, materializeBusyPercent: 50, materializeMaxWaitMs: 400 };
  const backlog = new DoorBacklog(store, materialize, settings, () => use);
  t.teardown(() => backlog.close());
  const until = async (what: () => boolean, ms: number) => {
    const end = Date.now() + ms;
    while (!what() && Date.now() < end) await new Promise((r) => setTimeout(r, 5));
    return what();
  };

  d.behind = 100;
  d.seq = 100;
  const began = Date.now();
  backlog.fellBehind('acme', 'ev1', 100);
  await new Promise((r) => setTimeout(r, 150));
  t.equal(d.steps.length, 0, 'no background step while the loop is busy');
  t.ok(await until(() => d.steps.length > 0, 3_000), 'a step runs once the longest wait is over');
  t.ok(Date.now() - began >= 400, 'and not before it');
  t.ok(d.behind >= 80, `one step per longest wait while busy (${100 - d.behind} written)`);

  // A reader does not wait for a quiet loop.
  const reading = backlog.settle('acme');
  t.not(reading, undefined);
  await reading;
  t.equal(d.behind, 0, 'the reader wrote everything while the loop was busy');

  // Quiet again: the background keeps up at its pace.
  use = 0.1;
  d.behind = 30;
  d.seq = 130;
  backlog.fellBehind('acme', 'ev1', 130);
  // Everything written, and the step that wrote the last of it answered (its commit landed): until
  // then a reader must still wait, which is what the step's commit in door() stands for.
  t.ok(await until(() => d.behind === 0 && d.answered === d.steps.length, 3_000), 'a quiet loop: the background writes everything');
  await new Promise((r) => setImmediate(r));
  t.equal(backlog.settle('acme'), undefined, 'caught up');
});
