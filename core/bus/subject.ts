// Subjects and patterns with NATS rules, so the in-process bus accepts and matches exactly what a
// NATS server would. A subject is dot-separated tokens; a pattern may use `*` (exactly one token)
// and `>` (one or more tokens, last position only). Wildcards are whole tokens: `a*` is a literal.
// Both buses validate with these functions, so a bad subject fails the same way on either.

/** A programming error (a subject built from unchecked input), so it is not an AppError. */
export class InvalidSubjectError extends TypeError {
  readonly subject: string;
  constructor(subject: string, reason: string) {
    super(`invalid bus subject ${JSON.stringify(subject)}: ${reason}`);
    this.name = 'InvalidSubjectError';
    this.subject = subject;
  }
}

const DOT = 46;
const STAR = 42;
const GT = 62;

/** The reason `s` is not acceptable, or undefined when it is. */
function problem(s: string, wildcards: boolean): string | undefined {
  if (typeof s !== 'string' || s.length === 0) return 'empty subject';
  let start = 0;
  for (let i = 0; i <= s.length; i++) {
    const c = i === s.length ? DOT : s.charCodeAt(i);
    // NATS splits on whitespace in the protocol line; we also refuse control characters.
    if (c <= 32 || c === 127) return 'whitespace or control character';
    if (c !== DOT) continue;
    const len = i - start;
    if (len === 0) return 'empty token';
    if (len === 1) {
      const t = s.charCodeAt(start);
      if (t === STAR || t === GT) {
        if (!wildcards) return 'wildcards are only allowed in patterns';
        if (t === GT && i !== s.length) return '`>` must be the last token';
      }
    }
    start = i + 1;
  }
  return undefined;
}

/** A literal subject: what publish and ask address. */
export function isValidSubject(s: string): boolean {
  return problem(s, false) === undefined;
}

/** A pattern: what subscribe and respond listen on. */
export function isValidPattern(p: string): boolean {
  return problem(p, true) === undefined;
}

export function assertSubject(s: string): void {
  const why = problem(s, false);
  if (why !== undefined) throw new InvalidSubjectError(s, why);
}

export function assertPattern(p: string): void {
  const why = problem(p, true);
  if (why !== undefined) throw new InvalidSubjectError(p, why);
}

/** True when the (valid) pattern has a `*` or `>` token. */
export function hasWildcard(p: string): boolean {
  return p.split('.').some((t) => t === '*' || t === '>');
}

/** A compiled pattern: split once, matched token by token (no regex, no allocation per match). */
export class SubjectPattern {
  readonly source: string;
  readonly tokens: readonly string[];
  /** The pattern ends in `>`. */
  private readonly tail: boolean;

  constructor(pattern: string) {
    assertPattern(pattern);
    this.source = pattern;
    const tokens = pattern.split('.');
    this.tail = tokens[tokens.length - 1] === '>';
    if (this.tail) tokens.pop();
    this.tokens = tokens;
  }

  /** Matches an already split subject. */
  matchTokens(subject: readonly string[]): boolean {
    const n = this.tokens.length;
    // `>` needs at least one token after the fixed part; otherwise lengths must be equal.
    if (this.tail ? subject.length <= n : subject.length !== n) return false;
    for (let i = 0; i < n; i++) {
      const t = this.tokens[i];
      if (t !== '*' && t !== subject[i]) return false;
    }
    return true;
  }

  matches(subject: string): boolean {
    return this.matchTokens(subject.split('.'));
  }
}

/** One-off match; callers on hot paths keep a SubjectPattern instead. */
export function matchSubject(pattern: string, subject: string): boolean {
  return new SubjectPattern(pattern).matches(subject);
}
