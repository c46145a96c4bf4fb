// Unit tests of the credential primitives: scrypt password hashes, RFC 6238 TOTP (with the RFC's
// own test vectors), base32 (RFC 4648 vectors), codes, org slugs and the failure limiter.
import t from 'tap';
import { FailureLimiter, ACCOUNT_ADDRESS_RULE, ACCOUNT_RULE } from '../../actors/auth/limiter.js';
import { ORG_ID, orgSlug } from '../../actors/auth/model.js';
import { digestSecret, hashPassword, newNumericCode, safeEqual, verifyPassword } from '../../core/auth/password.js';
import { base32Decode, base32Encode, hotp, newTotpSecret, otpauthUri, totp, verifyTotp } from '../../core/auth/totp.js';
import { ManualClock } from '../../core/clock.js';
import { AppError } from '../../core/errors.js';

t.test('password - scrypt hash verifies the right password only', async (t) => {
  const h = await hashPassword('correct horse battery');
  t.match(h, /^scrypt\$16384\$8\$1\$[A-Za-z0-9_-]+\$[A-Za-z0-9_-]+$/);
  t.notOk(h.includes('correct horse'), 'the hash does not contain the password');
  t.equal(await verifyPassword('correct horse battery', h), true);
  t.equal(await verifyPassword('correct horse batterY', h), false);
  t.equal(await verifyPassword('', h), false);
});

t.test('password - each hash has its own salt', async (t) => {
  const a = await hashPassword('same password');
  const b = await hashPassword('same password');
  t.not(a, b);
  t.not(a.split('$')[4], b.split('$')[4], 'salts differ');
  t.ok(await verifyPassword('same password', a));
  t.ok(await verifyPassword('same password', b));
});

t.test('password - a missing or malformed hash never verifies', async (t) => {
  t.equal(await verifyPassword('x', undefined), false);
  t.equal(await verifyPassword('x', null), false);
  t.equal(await verifyPassword('x', 'plain-text-password'), false);
  t.equal(await verifyPassword('x', 'scrypt$99999999$8$1$AAAA$BBBB'), false);
  t.equal(await verifyPassword('x', 'bcrypt$10$abc'), false);
});

t.test('password - parameters travel with the hash', async (t) => {
  const cheap = await hashPassword('pin-1234', { N: 1024, r: 8, p: 1 });
  t.match(cheap, /^scrypt\$1024\$8\$1\$/);
  t.ok(await verifyPassword('pin-1234', cheap));
});

t.test('password - digests and constant-time comparison', async (t) => {
  t.equal(digestSecret('k').length, 64);
  t.not(digestSecret('k', 'a'), digestSecret('k', 'b'), 'the salt changes the digest');
  t.ok(safeEqual('abc', 'abc'));
  t.notOk(safeEqual('abc', 'abd'));
  t.notOk(safeEqual('abc', 'abcd'));
});

t.test('codes - numeric codes have the asked length and vary', async (t) => {
  const seen = new Set<string>();
  for (let i = 0; i < 200; i++) {
    const c = newNumericCode(6);
    t.match(c, /^\d{6}$/);
    seen.add(c);
  }
  t.ok(seen.size > 190, 'codes are not repeated much');
});

t.test('base32 - RFC 4648 test vectors', async (t) => {
  const vectors: Array<[string, string]> = [
    ['', ''],
    ['f', 'MY'],
    ['fo', 'MZXQ'],
    ['foo', 'MZXW6'],
    ['foob', 'MZXW6YQ'],
    ['fooba', 'MZXW6YTB'],
    ['foobar', 'MZXW6YTBOI'],
  ];
  for (const [plain, enc] of vectors) {
    t.equal(base32Encode(Buffer.from(plain)), enc, `encode "${plain}"`);
    t.equal(base32Decode(enc).toString(), plain, `decode "${enc}"`);
  }
  t.equal(base32Decode('mzxw 6ytb-oi======').toString(), 'foobar', 'case, spaces, dashes and padding are ignored');
  t.throws(() => base32Decode('MZXW1'), /invalid base32/);
});

t.test('totp - RFC 6238 appendix B vectors (SHA-1, SHA-256, SHA-512, 8 digits)', async (t) => {
  const keys = {
    sha1: Buffer.from('12345678901234567890'),
    sha256: Buffer.from('12345678901234567890123456789012'),
    sha512: Buffer.from('1234567890123456789012345678901234567890123456789012345678901234'),
  };
  const table: Array<[number, string, string, string]> = [
    [59, '94287082', '46119246', '90693936'],
    [1111111109, '07081804', '68084774', '25091201'],
    [1111111111, '14050471', '67062674', '99943326'],
    [1234567890, '89005924', '91819424', '93441116'],
    [2000000000, '69279037', '90698825', '38618901'],
    [20000000000, '65353130', '77737706', '47863826'],
  ];
  for (const [secs, s1, s256, s512] of table) {
    t.equal(totp(keys.sha1, secs * 1000, { digits: 8, algorithm: 'sha1' }), s1, `sha1 T=${secs}`);
    t.equal(totp(keys.sha256, secs * 1000, { digits: 8, algorithm: 'sha256' }), s256, `sha256 T=${secs}`);
    t.equal(totp(keys.sha512, secs * 1000, { digits: 8, algorithm: 'sha512' }), s512, `sha512 T=${secs}`);
  }
});

t.test('totp - HOTP RFC 4226 appendix D vectors', async (t) => {
  const key = Buffer.from('12345678901234567890');
  const expected = ['755224', '287082', '359152', '969429', '338314', '254676', '287922', '162583', '399871', '520489'];
  expected.forEach((code, counter) => t.equal(hotp(key, counter), code, `counter ${counter}`));
});

t.test('totp - verification accepts one step of drift and reports the step', async (t) => {
  const secret = newTotpSecret();
  t.match(secret, /^[A-Z2-7]{32}$/);
  const key = base32Decode(secret);
  const now = Date.UTC(2026, 0, 1, 12, 0, 0);
  const step = Math.floor(now / 30_000);
  t.equal(verifyTotp(key, totp(key, now), now), step);
  t.equal(verifyTotp(key, totp(key, now - 30_000), now), step - 1, 'previous step');
  t.equal(verifyTotp(key, totp(key, now + 30_000), now), step + 1, 'next step');
  t.equal(verifyTotp(key, totp(key, now - 90_000), now), undefined, 'three steps old');
  t.equal(verifyTotp(key, 'abcdef', now), undefined);
  t.equal(verifyTotp(key, '12345', now), undefined, 'wrong length');
});

t.test('totp - otpauth URI carries the secret, issuer and account', async (t) => {
  const uri = otpauthUri('JBSWY3DPEHPK3PXP', 'ann@example.com', 'Acme Coffee');
  t.match(uri, /^otpauth:\/\/totp\/Acme%20Coffee:ann%40example\.com\?/);
  const q = new URL(uri).searchParams;
  t.equal(q.get('secret'), 'JBSWY3DPEHPK3PXP');
  t.equal(q.get('issuer'), 'Acme Coffee');
  t.equal(q.get('digits'), '6');
});

t.test('org ids - lowercase slug plus a random suffix', async (t) => {
  const a = orgSlug('Acme Coffee & Co.');
  t.match(a, /^acme-coffee-co-[a-z0-9]{6}$/);
  t.ok(ORG_ID.test(a));
  t.not(orgSlug('Acme'), orgSlug('Acme'), 'two orgs of the same name get different ids');
  t.match(orgSlug('!!!'), /^org-[a-z0-9]{6}$/, 'nothing usable in the name');
  t.match(orgSlug('Café Zürich'), /^cafe-zurich-/, 'accents folded');
  t.ok(orgSlug('x'.repeat(200)).length <= 47, 'long names are cut');
});

t.test('limiter - free failures, then doubling blocks with Retry-After, success resets', async (t) => {
  const clock = new ManualClock();
  const l = new FailureLimiter(clock);
  for (let i = 0; i < ACCOUNT_ADDRESS_RULE.free - 1; i++) l.fail('a', ACCOUNT_ADDRESS_RULE);
  t.doesNotThrow(() => l.check(['a']), 'still free');
  l.fail('a', ACCOUNT_ADDRESS_RULE);
  const caught = (keys: string[]): AppError | undefined => {
    try {
      l.check(keys);
    } catch (e) {
      return e as AppError;
    }
    return undefined;
  };
  const err = caught(['a', 'other']);
  t.equal(err?.statusCode, 429);
  t.equal(err?.headers?.['retry-after'], '30');
  clock.advance(30_001);
  t.doesNotThrow(() => l.check(['a']), 'block over');
  l.fail('a', ACCOUNT_ADDRESS_RULE);
  t.equal(caught(['a'])?.headers?.['retry-after'], '60', 'next block doubles');
  l.reset('a');
  t.doesNotThrow(() => l.check(['a']), 'reset clears the account');
  for (let i = 0; i < ACCOUNT_ADDRESS_RULE.free; i++) l.fail('b', ACCOUNT_ADDRESS_RULE);
  clock.advance(ACCOUNT_ADDRESS_RULE.windowMs + 1);
  l.fail('b', ACCOUNT_ADDRESS_RULE);
  t.doesNotThrow(() => l.check(['b']), 'a failure after the window starts a new count');
});

t.test('limiter - an attempt charges the account at the address, the address, and a slow account ceiling', async (t) => {
  const clock = new ManualClock();
  const l = new FailureLimiter(clock);
  const waits = (a: { check(): void }): string | undefined => {
    try {
      a.check();
    } catch (e) {
      return (e as AppError).headers?.['retry-after'];
    }
    return undefined;
  };
  const guesser = l.attempt('pw:acme:staff:sam@a.example', '203.0.113.9');
  const owner = l.attempt('pw:acme:staff:sam@a.example', '198.51.100.7');
  for (let i = 0; i < 40; i++) guesser.fail();
  t.ok(waits(guesser), 'the guessing address waits');
  t.equal(waits(owner), undefined, "the owner's address does not");
  // Many addresses, a few failures each: the ceiling stops them all, the owner too.
  for (let i = 0; i < ACCOUNT_RULE.free - 40; i++) l.attempt('pw:acme:staff:sam@a.example', `192.0.2.${i}`).fail();
  t.equal(waits(owner), '60', 'past the ceiling every address waits a minute');
  clock.advance(60_001);
  owner.fail();
  t.equal(waits(owner), '90', 'growing 1.5 times a failure');
  owner.succeed();
  t.ok(waits(owner), 'a success does not lift the ceiling');
  clock.advance(ACCOUNT_RULE.maxBlockMs);
  t.equal(waits(l.attempt('pw:acme:staff:other@a.example', '198.51.100.7')), undefined, 'other accounts are not affected');
});

t.test('leak guard - flags credentials outside their allowed answer, and hash-like fields', async (t) => {
  const { LeakGuard } = await import('./leak-guard.js');
  const g = new LeakGuard();
  g.secret('bpk_abcdefghijklmnopqrstuvwxyz', 'POST /profile/api-keys');
  g.secret('123456', 'GET /profile/outbox');
  g.replies.push(
    { method: 'POST', path: '/profile/api-keys', status: 201, text: '{"key":"bpk_abcdefghijklmnopqrstuvwxyz"}' },
    { method: 'GET', path: '/profile/outbox', status: 200, text: '{"code":"123456"}' },
    { method: 'GET', path: '/profile/api-keys', status: 200, text: '{"key":"bpk_abcdefghijklmnopqrstuvwxyz"}' },
    { method: 'GET', path: '/profile', status: 200, text: '{"id":"65a1234567ab","note":"code 123456"}' },
    { method: 'GET', path: '/profile', status: 200, text: '{"id":"65a123456b"}' },
    { method: 'GET', path: '/profile', status: 200, text: '{"passwordHash":"x"}' },
  );
  const fails: string[] = [];
  const stub = { fail: (m: string) => fails.push(m), ok: () => true } as unknown as Parameters<typeof g.check>[0];
  g.check(stub);
  t.equal(fails.length, 3, 'the key outside its creation answer, the code outside the outbox, a hash field');
  t.match(fails[0], /GET \/profile\/api-keys/);
  t.match(fails[1], /GET \/profile \(200\) carries/);
  t.match(fails[2], /hash-like field/);
});
