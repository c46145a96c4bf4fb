// One-time codes kept in the tenant's store (kv), not in process memory, so any node that owns the
// tenant can verify them (the spec's Authentication point 8 is a limitation we do not copy):
//
// - `auth-challenge` (key: digest of the challenge token): a sign-in challenge, its code hash,
//   attempts and resends;
// - `auth-magic` (key: email): the magic sign-in code of one address;
// - `auth-reset` (key: email): the password-reset code of one address;
// - `auth-verify` (key: account): the code that proves an account's email.
//
// Codes live 10 minutes and allow 5 attempts; the count is kept by the actor, so parallel guesses
// are counted one by one. A wrong guess is an answer, not an exception: the handler must return
// for its write (the attempt count) to be committed.
import type { ActivationContext, ActorContext, ActorKind } from '../../core/actor/runtime.js';
import { digestSecret, safeEqual } from '../../core/auth/password.js';
import { NS, type SubjectKind } from './model.js';
import { type Challenge, CHALLENGE_ACTOR, type ChallengeMsg, type ChallengeReply, type CodeMsg, type CodeReply, type ConsumeResult, MAGIC_ACTOR, RESET_ACTOR, SECURITY_ACTOR, type SecurityMsg, VERIFY_ACTOR } from './messages.js';

export const CODE_TTL_MS = 10 * 60 * 1000;
export const MAX_ATTEMPTS = 5;
/** Codes sent per challenge (the first included), and magic codes per address per TTL window. */
export const MAX_SENDS = 5;

export function codeHash(code: string, salt: string): string {
  return digestSecret(code, `code:${salt}`);
}

function load<T>(ctx: ActivationContext, ns: string): { v?: T } {
  return { v: ctx.store.getKv<T>(ctx.tenant, ns, ctx.key) };
}

export const challengeActor: ActorKind<{ v?: Challenge }, ChallengeMsg, ChallengeReply> = {
  kind: CHALLENGE_ACTOR,
  activate: (ctx) => load<Challenge>(ctx, NS.challenge),
  async receive(state, msg, ctx: ActorContext) {
    const now = ctx.clock.now();
    const drop = () => {
      ctx.batch.deleteKv(ctx.tenant, NS.challenge, ctx.key);
      state.v = undefined;
    };
    if (msg.type === 'create') {
      state.v = msg.ch;
      ctx.batch.putKv(ctx.tenant, NS.challenge, ctx.key, msg.ch);
      return { status: 'ok', ch: msg.ch };
    }
    const ch = state.v;
    if (!ch) return { status: 'gone' };
    if (msg.type === 'expire') {
      if (ch.expiresAt < now) drop();
      return { status: 'gone' };
    }
    if (ch.expiresAt <= now) {
      drop();
      return { status: 'gone' };
    }
    if (msg.type === 'resend') {
      if (ch.method === 'authenticator') return { status: 'not-sendable' };
      if (ch.sends >= MAX_SENDS) return { status: 'limit' };
      const next: Challenge = { ...ch, codeHash: msg.codeHash, salt: msg.salt, sends: ch.sends + 1, expiresAt: now + CODE_TTL_MS };
      state.v = next;
      ctx.batch.putKv(ctx.tenant, NS.challenge, ctx.key, next);
      return { status: 'ok', ch: next };
    }
    let ok: boolean;
    if (ch.method === 'authenticator') {
      const r = await ctx.ask<ConsumeResult>(SECURITY_ACTOR, ch.factorSubject ?? '', { type: 'consume', code: msg.code } satisfies SecurityMsg);
      ok = r.ok;
    } else {
      ok = !!ch.codeHash && !!ch.salt && safeEqual(codeHash(msg.code, ch.salt), ch.codeHash);
    }
    if (ok) {
      drop();
      return { status: 'ok', ch };
    }
    const attempts = ch.attempts + 1;
    if (attempts >= MAX_ATTEMPTS) {
      drop();
      return { status: 'wrong', attemptsLeft: 0 };
    }
    state.v = { ...ch, attempts };
    ctx.batch.putKv(ctx.tenant, NS.challenge, ctx.key, state.v);
    return { status: 'wrong', attemptsLeft: MAX_ATTEMPTS - attempts };
  },
};

/**
 * A code sent to an address (or for an account) that is redeemed without a challenge token: the
 * magic sign-in code (key: email), the password-reset code (key: email) and the email-verification
 * code (key: the account). One actor kind each, one shape: `sub`/`kind` name the account the code
 * was issued for, where it names one.
 */
export interface OneTimeCode {
  sub?: string;
  kind?: SubjectKind;
  codeHash?: string;
  salt?: string;
  attempts: number;
  expiresAt: number;
  /** When codes were issued within the last TTL window (issuance limit). */
  issued: number[];
}

/** Kept under their first names: the magic code was the first of these. */
export type MagicCode = OneTimeCode;

function oneTimeCodeActor(kind: string, ns: string): ActorKind<{ v?: OneTimeCode }, CodeMsg, CodeReply> {
  return {
    kind,
    activate: (ctx) => load<OneTimeCode>(ctx, ns),
    receive(state, msg, ctx) {
      const now = ctx.clock.now();
      const save = (m: OneTimeCode) => {
        state.v = m;
        ctx.batch.putKv(ctx.tenant, ns, ctx.key, m);
      };
      const recent = (state.v?.issued ?? []).filter((t) => t > now - CODE_TTL_MS);
      if (msg.type === 'issue') {
        if (recent.length >= MAX_SENDS) {
          return { status: 'limit', retryAfterSeconds: Math.max(1, Math.ceil((recent[0] + CODE_TTL_MS - now) / 1000)) };
        }
        const m: OneTimeCode = { codeHash: msg.codeHash, salt: msg.salt, attempts: 0, expiresAt: now + CODE_TTL_MS, issued: [...recent, now] };
        if (msg.sub !== undefined) m.sub = msg.sub;
        if (msg.kind !== undefined) m.kind = msg.kind;
        save(m);
        return { status: 'issued' };
      }
      if (msg.type === 'expire') {
        const e = state.v;
        if (e && e.expiresAt < now && e.issued.every((t) => t < now - CODE_TTL_MS)) {
          ctx.batch.deleteKv(ctx.tenant, ns, ctx.key);
          state.v = undefined;
        }
        return { status: 'gone' };
      }
      const m = state.v;
      if (!m?.codeHash || !m.salt) return { status: 'gone' };
      // A used, expired or exhausted code is forgotten; the issuance history stays for the limit.
      const spent: OneTimeCode = { attempts: 0, expiresAt: m.expiresAt, issued: recent };
      if (m.expiresAt <= now) {
        save(spent);
        return { status: 'gone' };
      }
      if (safeEqual(codeHash(msg.code, m.salt), m.codeHash)) {
        save(spent);
        const ok: CodeReply = { status: 'ok' };
        if (m.sub !== undefined) ok.sub = m.sub;
        if (m.kind !== undefined) ok.kind = m.kind;
        return ok;
      }
      const attempts = m.attempts + 1;
      if (attempts >= MAX_ATTEMPTS) {
        save(spent);
        return { status: 'wrong', attemptsLeft: 0 };
      }
      save({ ...m, attempts });
      return { status: 'wrong', attemptsLeft: MAX_ATTEMPTS - attempts };
    },
  };
}

export const magicActor = oneTimeCodeActor(MAGIC_ACTOR, NS.magic);
export const resetActor = oneTimeCodeActor(RESET_ACTOR, NS.reset);
export const verifyActor = oneTimeCodeActor(VERIFY_ACTOR, NS.verify);
