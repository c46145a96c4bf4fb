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
