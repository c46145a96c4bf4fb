import t from 'tap';
import {
  assertPattern,
  assertSubject,
  hasWildcard,
  InvalidSubjectError,
  isValidPattern,
  isValidSubject,
  matchSubject,
  SubjectPattern,
} from '../../core/bus/subject.js';

t.test('subject - literal subjects', async (t) => {
  for (const s of ['a', 'a.b.c', 'tenant.64f0c0ffee.scanner', 'a*', 'a.b>', 'x-y_z.1', 'é.ü']) {
    t.ok(isValidSubject(s), `valid: ${s}`);
    t.doesNotThrow(() => assertSubject(s));
  }
  for (const s of ['', '.', 'a.', '.a', 'a..b', 'a b', 'a\tb', 'a\nb', 'a\rb', 'a\u0000b', 'a.*', '*', '>', 'a.>', '*.a']) {
    t.notOk(isValidSubject(s), `invalid: ${JSON.stringify(s)}`);
  }
});

t.test('subject - patterns', async (t) => {
  for (const p of ['a', '*', '>', 'a.*', '*.b', 'a.*.c', 'a.>', '*.>', 'a.*.>']) {
    t.ok(isValidPattern(p), `valid: ${p}`);
    t.doesNotThrow(() => assertPattern(p));
  }
  for (const p of ['', 'a..b', 'a.', '.>', '>.a', 'a.>.b', 'a b.*', 'a.\t']) {
    t.notOk(isValidPattern(p), `invalid: ${JSON.stringify(p)}`);
  }
});

t.test('subject - errors name the subject and the reason', async (t) => {
  t.throws(() => assertSubject('a..b'), {
    name: 'InvalidSubjectError',
    subject: 'a..b',
    message: 'invalid bus subject "a..b": empty token',
  });
  t.throws(() => assertSubject('a.*'), { message: /wildcards are only allowed in patterns/ });
  t.throws(() => assertPattern('a.>.b'), { message: /`>` must be the last token/ });
  t.throws(() => assertSubject('a b'), { message: /whitespace/ });
  t.throws(() => assertSubject(''), { message: /empty subject/ });
  t.throws(() => assertSubject(undefined as unknown as string), InvalidSubjectError);
  const err = (() => {
    try {
      assertSubject('x..');
    } catch (e) {
      return e;
    }
  })();
  t.ok(err instanceof TypeError, 'a TypeError: a programming error, not a client error');
});

t.test('subject - hasWildcard', async (t) => {
  t.ok(hasWildcard('*'));
  t.ok(hasWildcard('>'));
  t.ok(hasWildcard('a.*.b'));
  t.ok(hasWildcard('a.>'));
  t.notOk(hasWildcard('a.b'));
  t.notOk(hasWildcard('a*.b>'), 'wildcards are whole tokens');
});

t.test('subject - `*` matches exactly one token', async (t) => {
  const p = new SubjectPattern('a.*.c');
  t.ok(p.matches('a.b.c'));
  t.ok(p.matches('a.*x.c'));
  t.notOk(p.matches('a.c'));
  t.notOk(p.matches('a.b.b.c'));
  t.notOk(p.matches('a.b.d'));
  t.notOk(p.matches('x.b.c'));
  t.ok(matchSubject('*', 'a'));
  t.notOk(matchSubject('*', 'a.b'));
  t.ok(matchSubject('*.*', 'a.b'));
});

t.test('subject - `>` matches one or more trailing tokens', async (t) => {
  t.ok(matchSubject('a.>', 'a.b'));
  t.ok(matchSubject('a.>', 'a.b.c.d'));
  t.notOk(matchSubject('a.>', 'a'), '`>` needs at least one token');
  t.notOk(matchSubject('a.>', 'b.c'));
  t.ok(matchSubject('>', 'a'));
  t.ok(matchSubject('>', 'a.b.c'));
  t.ok(matchSubject('a.*.>', 'a.b.c'));
  t.notOk(matchSubject('a.*.>', 'a.b'));
});

t.test('subject - literal patterns match only themselves', async (t) => {
  t.ok(matchSubject('a.b', 'a.b'));
  t.notOk(matchSubject('a.b', 'a.b.c'));
  t.notOk(matchSubject('a.b', 'a'));
  t.notOk(matchSubject('a*', 'ab'), '`a*` is a literal token');
  t.ok(matchSubject('a*', 'a*'));
});

t.test('subject - SubjectPattern keeps its source and refuses bad patterns', async (t) => {
  const p = new SubjectPattern('a.*.>');
  t.equal(p.source, 'a.*.>');
  t.same(p.tokens, ['a', '*']);
  t.ok(p.matchTokens(['a', 'b', 'c']));
  t.throws(() => new SubjectPattern('a..b'), InvalidSubjectError);
});
