// The Bus contract: every implementation runs this same suite (in-process.test.ts, nats.test.ts).
// `a` and `b` are two nodes: two connections for NATS, one instance twice for in-process. Every
// registration made on `b` is followed by `b.flush()`, the contract's way to know the transport
// has it before `a` relies on it.
import type { Test } from 'tap';
import { AppError, appError } from '../../core/errors.js';
import type { Bus } from '../../core/bus/bus.js';
import { InvalidSubjectError } from '../../core/bus/subject.js';

export interface BusPair {
  a: Bus;
  b: Bus;
  close(): Promise<void>;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Polls until `cond` holds; fails the wait (not the process) after `ms`. */
async function until(cond: () => boolean, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${ms} ms`);
    await sleep(5);
  }
}

export function runBusContract(t: Test, name: string, makeBus: () => Promise<BusPair>): void {
  // Each subtest gets fresh nodes, closed in its teardown.
  async function nodes(tt: Test): Promise<BusPair> {
    const pair = await makeBus();
    tt.teardown(() => pair.close());
    return pair;
  }

  t.test(`${name} - ask reaches the responder on the other node`, async (tt) => {
    const { a, b } = await nodes(tt);
    const seen: string[] = [];
    b.respond('math.double', (msg, subject) => {
      seen.push(subject);
      return { n: (msg as { n: number }).n * 2 };
    });
    await b.flush();
    tt.same(await a.ask('math.double', { n: 21 }), { n: 42 });
    tt.same(seen, ['math.double'], 'the responder is told the subject');
  });

  t.test(`${name} - payloads are copies, never shared objects`, async (tt) => {
    const { a, b } = await nodes(tt);
    const kept = { items: [1, 2] };
    b.respond('copy.ask', (msg) => {
      (msg as { items: number[] }).items.push(99);
      return kept;
    });
    const listened: Array<{ items: number[] }> = [];
    for (let i = 0; i < 2; i++) {
      b.subscribe('copy.ev', (ev) => {
        const e = ev as { items: number[] };
        e.items.push(i);
        listened.push(e);
      });
    }
    await b.flush();

    const sent = { items: [1] };
    const reply = await a.ask<{ items: number[] }>('copy.ask', sent);
    tt.same(sent, { items: [1] }, 'the responder mutating its message leaves the sender’s alone');
    reply.items.push(7);
    tt.same(kept, { items: [1, 2] }, 'the asker mutating the reply leaves the responder’s alone');
    tt.same(await a.ask('copy.ask', { items: [] }), { items: [1, 2] });

    const event = { items: [0] };
    a.publish('copy.ev', event);
    await until(() => listened.length === 2);
    tt.same(event, { items: [0] }, 'listeners mutating the event leave the publisher’s alone');
    tt.same(listened.map((e) => e.items.length), [2, 2], 'each listener has its own copy');

    const when = new Date('2024-05-01T10:00:00.000Z');
    b.respond('copy.ask-date', (msg) => msg);
    await b.flush();
    tt.strictSame(await a.ask('copy.ask-date', { when, gone: undefined }), { when: when.toISOString() },
      'JSON semantics: a Date arrives as its ISO string, undefined fields vanish');
  });

  t.test(`${name} - primitives and undefined make the trip`, async (tt) => {
    const { a, b } = await nodes(tt);
    b.respond('echo.any', (msg) => msg);
    await b.flush();
    for (const v of [null, 0, -1.5, '', 'text', true, false, [1, 'x'], { a: { b: [null] } }]) {
      tt.same(await a.ask('echo.any', v), v, JSON.stringify(v));
    }
    tt.equal(await a.ask('echo.any', undefined), undefined, 'undefined');
    const events: unknown[] = [];
    b.subscribe('echo.ev', (ev) => events.push(ev));
    await b.flush();
    a.publish('echo.ev', undefined);
    a.publish('echo.ev', 0);
    await until(() => events.length === 2);
    tt.same(events, [undefined, 0]);
  });

  t.test(`${name} - unencodable payloads fail in the sender`, async (tt) => {
    const { a, b } = await nodes(tt);
    b.respond('enc.ask', () => 1);
    await b.flush();
    tt.throws(() => a.publish('enc.ev', { n: 1n }), TypeError, 'a BigInt throws in publish');
    await tt.rejects(a.ask('enc.ask', { n: 1n }), TypeError, 'a BigInt rejects the ask');
  });

  t.test(`${name} - an AppError from the responder keeps code, status and message`, async (tt) => {
    const { a, b } = await nodes(tt);
    b.respond('seat.take', () => {
      throw appError('ERR_CONFLICT', 'seat 4 is taken');
    });
    b.respond('form.check', () => {
      throw new AppError('ERR_VALIDATION', ['two fields'], { messages: ['name is required', 'x'] });
    });
    await b.flush();
    const err = await a.ask('seat.take', {}).catch((e: unknown) => e);
    tt.ok(err instanceof AppError, 'an AppError');
    tt.match(err, { code: 'ERR_CONFLICT', statusCode: 409, message: 'seat 4 is taken' });
    await tt.rejects(a.ask('form.check', {}), {
      code: 'ERR_VALIDATION',
      statusCode: 400,
      messages: ['name is required', 'x'],
    });
  });

  t.test(`${name} - a plain Error becomes ERR_INTERNAL without its message or stack`, async (tt) => {
    const { a, b } = await nodes(tt);
    b.respond('boom.sync', () => {
      throw new Error('db password is hunter2');
    });
    b.respond('boom.async', async () => {
      await sleep(1);
      throw new TypeError('db password is hunter2');
    });
    await b.flush();
    for (const subject of ['boom.sync', 'boom.async']) {
      const err = await a.ask(subject, {}).catch((e: unknown) => e);
      tt.ok(err instanceof AppError, `${subject}: an AppError`);
      const e = err as AppError;
      tt.equal(e.code, 'ERR_INTERNAL');
      tt.equal(e.statusCode, 500);
      tt.equal(e.message, 'internal server error');
      tt.notMatch(JSON.stringify({ m: e.message, x: { ...e } }), /hunter2|\bat \S+:\d+/);
    }
  });

  t.test(`${name} - an async responder is awaited`, async (tt) => {
    const { a, b } = await nodes(tt);
    b.respond('slow.add', async (msg) => {
      await sleep(20);
      const { x, y } = msg as { x: number; y: number };
      return x + y;
    });
    await b.flush();
    tt.equal(await a.ask('slow.add', { x: 2, y: 3 }), 5);
  });

  t.test(`${name} - no responder rejects with ERR_UNAVAILABLE`, async (tt) => {
    const { a, b } = await nodes(tt);
    b.subscribe('nobody.home', () => undefined);
    await b.flush();
    const started = Date.now();
    for (const subject of ['nobody.home', 'nobody.else']) {
      await tt.rejects(a.ask(subject, {}, { timeoutMs: 3000 }), {
        code: 'ERR_UNAVAILABLE',
        statusCode: 503,
        message: `no responder for subject "${subject}"`,
      }, `${subject}: a listener is not a responder`);
    }
    tt.ok(Date.now() - started < 1000, 'fails fast, without waiting for the timeout');
  });

  t.test(`${name} - a slow responder rejects with ERR_TIMEOUT within timeoutMs`, async (tt) => {
    const { a, b } = await nodes(tt);
    b.respond('slow.never', () => sleep(600).then(() => 'late'));
    await b.flush();
    const started = Date.now();
    await tt.rejects(a.ask('slow.never', {}, { timeoutMs: 150 }), {
      code: 'ERR_TIMEOUT',
      statusCode: 504,
      message: 'bus request to "slow.never" timed out',
    });
    const took = Date.now() - started;
    tt.ok(took >= 140 && took < 1000, `timed out after ${took} ms`);
    await tt.rejects(a.ask('slow.never', {}, { timeoutMs: 0 }), RangeError, 'timeoutMs must be > 0');
  });

  t.test(`${name} - respond with wildcards`, async (tt) => {
    const { a, b } = await nodes(tt);
    b.respond('orders.*.get', (_m, subject) => `one:${subject}`);
    b.respond('tenant.>', (_m, subject) => `tail:${subject}`);
    await b.flush();
    tt.equal(await a.ask('orders.42.get', null), 'one:orders.42.get');
    tt.equal(await a.ask('tenant.t1', null), 'tail:tenant.t1');
    tt.equal(await a.ask('tenant.t1.scanner.ev9', null), 'tail:tenant.t1.scanner.ev9');
    for (const subject of ['orders.42.x.get', 'orders.get', 'orders.42', 'tenant', 'tenants.t1']) {
      await tt.rejects(a.ask(subject, null), { code: 'ERR_UNAVAILABLE' }, `${subject} does not match`);
    }
  });

  t.test(`${name} - subscribe with wildcards, nothing delivered that does not match`, async (tt) => {
    const { a, b } = await nodes(tt);
    const one: string[] = [];
    const tail: string[] = [];
    const exact: string[] = [];
    b.subscribe('room.*.msg', (_e, s) => one.push(s));
    b.subscribe('room.>', (_e, s) => tail.push(s));
    b.subscribe('room.1.msg', (_e, s) => exact.push(s));
    await b.flush();
    for (const s of ['room.1.msg', 'room.1.typing', 'room.1.msg.edit', 'room', 'rooms.1.msg', 'x.room.1.msg']) {
      a.publish(s, s);
    }
    // Delivery is in publish order, so once the last event is in, the earlier ones are too.
    a.publish('room.end.msg', 'end');
    await until(() => one.includes('room.end.msg') && tail.includes('room.end.msg'));
    tt.same(one, ['room.1.msg', 'room.end.msg']);
    tt.same(tail, ['room.1.msg', 'room.1.typing', 'room.1.msg.edit', 'room.end.msg']);
    tt.same(exact, ['room.1.msg']);
  });

  t.test(`${name} - publish order is kept for one subscriber (1000 events)`, async (tt) => {
    const { a, b } = await nodes(tt);
    const got: number[] = [];
    b.subscribe('seq.*', (ev) => got.push(ev as number));
    await b.flush();
    for (let i = 0; i < 1000; i++) a.publish(i % 2 ? 'seq.odd' : 'seq.even', i);
    await a.flush();
    await until(() => got.length >= 1000);
    tt.equal(got.length, 1000);
    tt.ok(got.every((v, i) => v === i), 'every event in publish order');
  });

  t.test(`${name} - every subscriber receives every event`, async (tt) => {
    const { a, b } = await nodes(tt);
    const lists: number[][] = [[], [], [], []];
    a.subscribe('fan.out', (ev) => lists[0].push(ev as number));
    b.subscribe('fan.out', (ev) => lists[1].push(ev as number));
    b.subscribe('fan.*', (ev) => lists[2].push(ev as number));
    b.subscribe('fan.>', (ev) => lists[3].push(ev as number));
    await a.flush();
    await b.flush();
    for (let i = 0; i < 10; i++) a.publish('fan.out', i);
    await until(() => lists.every((l) => l.length === 10));
    for (const l of lists) tt.same(l, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });

  t.test(`${name} - a throwing listener reaches neither the publisher nor other listeners`, async (tt) => {
    const { a, b } = await nodes(tt);
    const got: unknown[] = [];
    b.subscribe('bad.ev', () => {
      throw new Error('listener bug');
    });
    b.subscribe('bad.ev', async () => {
      throw new Error('async listener bug');
    });
    b.subscribe('bad.ev', (ev) => got.push(ev));
    await b.flush();
    tt.doesNotThrow(() => a.publish('bad.ev', 1));
    a.publish('bad.ev', 2);
    await until(() => got.length === 2);
    tt.same(got, [1, 2]);
  });

  t.test(`${name} - unsubscribe stops delivery and answering`, async (tt) => {
    const { a, b } = await nodes(tt);
    const gone: number[] = [];
    const stays: number[] = [];
    const off = b.subscribe('unsub.ev', (ev) => gone.push(ev as number));
    b.subscribe('unsub.ev', (ev) => stays.push(ev as number));
    const stopAnswering = b.respond('unsub.ask', () => 'here');
    await b.flush();
    a.publish('unsub.ev', 1);
    await until(() => gone.length === 1 && stays.length === 1);
    tt.equal(await a.ask('unsub.ask', null), 'here');

    off();
    off(); // twice is harmless
    stopAnswering();
    await b.flush();
    a.publish('unsub.ev', 2);
    a.publish('unsub.ev', 3);
    await until(() => stays.length === 3);
    tt.same(gone, [1], 'nothing after unsubscribe');
    await tt.rejects(a.ask('unsub.ask', null), { code: 'ERR_UNAVAILABLE' });
  });

  t.test(`${name} - exactly one of several matching responders answers`, async (tt) => {
    const { a, b } = await nodes(tt);
    const calls: string[] = [];
    a.respond('job.run', () => calls.push('a.exact'));
    b.respond('job.run', () => calls.push('b.exact'));
    b.respond('job.*', () => calls.push('b.star'));
    await a.flush();
    await b.flush();
    for (let i = 0; i < 30; i++) await a.ask('job.run', i);
    tt.equal(calls.length, 30, 'one answer per ask');
  });

  t.test(`${name} - 1000 concurrent asks are each answered with their own reply`, async (tt) => {
    const { a, b } = await nodes(tt);
    b.respond('sq.*', async (msg, subject) => {
      const { id } = msg as { id: number };
      if (id % 3 === 0) await sleep(id % 7);
      return { id, sq: id * id, subject };
    });
    await b.flush();
    const replies = await Promise.all(
      Array.from({ length: 1000 }, (_, id) =>
        a.ask<{ id: number; sq: number; subject: string }>(`sq.${id % 10}`, { id }),
      ),
    );
    const wrong = replies.filter(
      (r, id) => r.id !== id || r.sq !== id * id || r.subject !== `sq.${id % 10}`,
    );
    tt.equal(wrong.length, 0, 'every reply matches its request');
  });

  t.test(`${name} - invalid subjects are refused`, async (tt) => {
    const { a } = await nodes(tt);
    for (const s of ['', 'a..b', '.a', 'a.', 'a b', 'a\tb', 'a.*', 'a.>', '*', '>']) {
      tt.throws(() => a.publish(s, 1), InvalidSubjectError, `publish ${JSON.stringify(s)}`);
      await tt.rejects(a.ask(s, 1), InvalidSubjectError, `ask ${JSON.stringify(s)}`);
    }
    for (const p of ['', 'a..b', 'a.>.b', '>.a', 'a b']) {
      tt.throws(() => a.subscribe(p, () => undefined), InvalidSubjectError, `subscribe ${p}`);
      tt.throws(() => a.respond(p, () => undefined), InvalidSubjectError, `respond ${p}`);
    }
  });

  t.test(`${name} - close() delivers what was published, then refuses work`, async (tt) => {
    const pair = await nodes(tt);
    const { a, b } = pair;
    const got: number[] = [];
    b.subscribe('bye.ev', (ev) => got.push(ev as number));
    b.respond('bye.ask', () => 'ok');
    await b.flush();
    for (let i = 0; i < 10; i++) a.publish('bye.ev', i);
    await a.close();
    await until(() => got.length === 10);
    tt.same(got, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9], 'published before close, delivered');

    await a.close(); // twice is harmless
    await tt.rejects(a.ask('bye.ask', null), { code: 'ERR_UNAVAILABLE', message: 'the bus is closed' });
    tt.throws(() => a.publish('bye.ev', 1), { code: 'ERR_UNAVAILABLE' });
    tt.throws(() => a.subscribe('bye.ev', () => undefined), { code: 'ERR_UNAVAILABLE' });
    tt.throws(() => a.respond('bye.x', () => undefined), { code: 'ERR_UNAVAILABLE' });
    await a.flush(); // resolves, nothing to flush
    await pair.close();
    await tt.rejects(b.ask('bye.ask', null), { code: 'ERR_UNAVAILABLE' });
  });

  t.test(`${name} - close() lets a running responder reply`, async (tt) => {
    const { a, b } = await nodes(tt);
    let started = false;
    b.respond('drain.ask', async () => {
      started = true;
      await sleep(100);
      return 'finished';
    });
    await b.flush();
    const pending = a.ask('drain.ask', null, { timeoutMs: 2000 });
    await until(() => started);
    await b.close();
    tt.equal(await pending, 'finished');
  });

  t.test(`${name} - close() lets the closing node's own pending ask finish`, async (tt) => {
    const { a, b } = await nodes(tt);
    let started = false;
    b.respond('drain.mine', async () => {
      started = true;
      await sleep(100);
      return 'mine';
    });
    await b.flush();
    const pending = a.ask('drain.mine', null, { timeoutMs: 2000 });
    await until(() => started);
    await a.close();
    tt.equal(await pending, 'mine');
  });
}
