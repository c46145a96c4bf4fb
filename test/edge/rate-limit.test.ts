import t from 'tap';
import { ManualClock } from '../../core/clock.js';
import { AppError } from '../../core/errors.js';
import { RateLimiter, TokenBuckets } from '../../edge/rate-limit.js';

t.test('TokenBuckets - burst, refill and the wait it reports', async (t) => {
  const clock = new ManualClock();
  const b = new TokenBuckets(clock);
  const bucket = { perSecond: 2, burst: 3 };
  t.same([b.take('k', bucket), b.take('k', bucket), b.take('k', bucket)], [0, 0, 0], 'the burst is granted');
  t.equal(b.take('k', bucket), 1, 'then a wait of a second (2 per second → 0.5 s, rounded up)');
  clock.advance(500);
  t.equal(b.take('k', bucket), 0, 'refilled one token after 0.5 s');
  t.equal(b.take('other', bucket), 0, 'keys are independent');
  const slow = { perSecond: 0.1, burst: 1 };
  t.equal(b.take('s', slow), 0);
  t.equal(b.take('s', slow), 10, 'Retry-After is whole seconds until a token');
});

t.test('RateLimiter - per plan per org, and per address; 429 with Retry-After', async (t) => {
  const clock = new ManualClock();
  const rl = new RateLimiter(
    { enabled: true, defaultPlan: 'standard', plans: { free: { perSecond: 1, burst: 2 }, standard: { perSecond: 100, burst: 100 } }, perAddress: { perSecond: 1, burst: 1 } },
    clock,
  );
  rl.chargeOrg('a', 'free');
  rl.chargeOrg('a', 'free');
  const err = (() => {
    try {
      rl.chargeOrg('a', 'free');
    } catch (e) {
      return e as AppError;
    }
  })();
  t.equal(err?.statusCode, 429);
  t.same(err?.headers, { 'retry-after': '1' });
  for (let i = 0; i < 100; i++) rl.chargeOrg('b', undefined);
  t.throws(() => rl.chargeOrg('b', undefined), { name: 'AppError', statusCode: 429 }, 'the default plan applies without one');
  t.doesNotThrow(() => rl.chargeOrg('c', 'no-such-plan'), 'an unknown plan falls back to the default');
  rl.chargeAddress('10.0.0.1');
  t.throws(() => rl.chargeAddress('10.0.0.1'), { name: 'AppError', statusCode: 429 });
  t.doesNotThrow(() => rl.chargeAddress('10.0.0.2'));
  const off = new RateLimiter({ enabled: false, defaultPlan: 'x', plans: { x: { perSecond: 0.001, burst: 0 } }, perAddress: { perSecond: 0.001, burst: 0 } }, clock);
  t.doesNotThrow(() => {
    off.chargeOrg('a', 'x');
    off.chargeAddress('1');
  }, 'disabled limits charge nothing');
});

t.test('RateLimiter - by principal: anonymous callers spend their address and the anonymous bucket, never the plan', async (t) => {
  const clock = new ManualClock();
  const rl = new RateLimiter(
    {
      enabled: true,
      defaultPlan: 'p',
      plans: { p: { perSecond: 10, burst: 20 } },
      perAddress: { perSecond: 1, burst: 1 },
      anonymousShare: 0.25,
      customerShare: 0.1,
      anonymousPerAddress: { perSecond: 1, burst: 3 },
    },
    clock,
  );
  const staff = { kind: 'staff', sub: 'u1' };
  // Three addresses of three requests each: the address bucket holds 3, the organisation's
  // anonymous bucket 5 (a quarter of 20).
  const granted = [];
  for (const ip of ['10.0.0.1', '10.0.0.2', '10.0.0.3']) {
    for (let i = 0; i < 4; i++) {
      try {
        rl.chargeAnonymous('org', undefined, ip);
        granted.push(ip);
      } catch (e) {
        t.equal((e as AppError).statusCode, 429);
      }
    }
  }
  t.equal(granted.length, 5, 'the anonymous bucket of the organisation bounds many addresses together');
  t.same(granted.slice(0, 3), ['10.0.0.1', '10.0.0.1', '10.0.0.1'], 'one address gets its own burst, no more');
  t.throws(() => rl.chargeAnonymous('org', undefined, '10.0.0.9'), { name: 'AppError', statusCode: 429 }, 'a fresh address finds the anonymous bucket spent');
  t.doesNotThrow(() => rl.chargeAnonymous('other', undefined, '10.0.0.9'), "another organisation's anonymous bucket is its own");
  for (let i = 0; i < 20; i++) rl.charge('org', undefined, staff);
  t.pass('the plan bucket of 20 is whole for signed-in callers');
  t.throws(() => rl.charge('org', undefined, { kind: 'app', sub: 'k' }), { name: 'AppError', statusCode: 429 }, 'and spent by them alike');
});

t.test('RateLimiter - by principal: a customer spends its own share first, staff and keys have no per-token cap', async (t) => {
  const clock = new ManualClock();
  const rl = new RateLimiter(
    { enabled: true, defaultPlan: 'p', plans: { p: { perSecond: 10, burst: 20 } }, perAddress: { perSecond: 1, burst: 1 }, customerShare: 0.1 },
    clock,
  );
  rl.charge('org', undefined, { kind: 'customer', sub: 'c1' });
  rl.charge('org', undefined, { kind: 'customer', sub: 'c1' });
  const err = (() => {
    try {
      rl.charge('org', undefined, { kind: 'customer', sub: 'c1' });
    } catch (e) {
      return e as AppError;
    }
  })();
  t.equal(err?.statusCode, 429, "past its share (0.1 of the burst 20) one customer is refused");
  t.same(err?.headers, { 'retry-after': '1' });
  for (let i = 0; i < 18; i++) rl.charge('org', undefined, { kind: 'staff', sub: 'u1' });
  t.throws(() => rl.charge('org', undefined, { kind: 'customer', sub: 'c2' }), { name: 'AppError', statusCode: 429 }, 'a refused customer spent nothing of the plan: 2 + 18 fill it');
  clock.advance(100);
  t.doesNotThrow(() => rl.charge('org', undefined, { kind: 'staff', sub: 'u1' }), 'one staff token may spend the whole plan');
});
