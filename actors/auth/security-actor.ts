// One person's credentials (actor key: the user, customer or application sk): password and PIN
// hashes, the TOTP secret and its enrolment, 2FA on/off, backup codes. Checks that must not race
// live here: a TOTP code is accepted once (its step is remembered), a backup code is used once.
import type { ActivationContext, ActorContext, ActorKind } from '../../core/actor/runtime.js';
import { digestSecret, safeEqual } from '../../core/auth/password.js';
import { base32Decode, verifyTotp } from '../../core/auth/totp.js';
import { dropRevocation, REVOKED_NS, revoke, type Revocation } from '../../core/auth/revocations.js';
import { appError } from '../../core/errors.js';
import { newRecord, nextVersion, type StoredRecord } from '../../core/store/record.js';
import { BACKUP, SECURITY, type BackupData, type SecurityData } from './model.js';
import { RecordOverlay } from './overlay.js';
import { type ConsumeResult, type ProofResult, SECURITY_ACTOR, type SecurityMsg } from './messages.js';

/** An enrolment not confirmed within this time must be started again. */
const TOTP_PENDING_MS = 15 * 60 * 1000;

/** Backup codes are compared case- and separator-insensitively; the salt ties a hash to its owner. */
export function backupCodeHash(subject: string, code: string): string {
  return digestSecret(code.toUpperCase().replace(/[\s-]/g, ''), `backup:${subject}`);
}

interface SecurityState {
  ov: RecordOverlay;
}

export const securityActor: ActorKind<SecurityState, SecurityMsg, unknown> = {
  kind: SECURITY_ACTOR,
  activate: (ctx: ActivationContext) => ({ ov: new RecordOverlay(ctx.store, ctx.tenant) }),
  receive(state, msg, ctx: ActorContext) {
    const { ov } = state;
    const sk = ctx.key;
    const now = ctx.clock.now();
    if (msg.type === 'expireRevocation') {
      const r = ctx.store.getKv<Revocation>(ctx.tenant, REVOKED_NS, sk);
      if (r && r.at + msg.lifeMs < now) dropRevocation(ctx.batch, ctx.tenant, REVOKED_NS, sk);
      return { ok: true };
    }
    const iso = new Date(now).toISOString();
    const rec = ov.get(SECURITY, sk);
    const cur = (rec?.data as SecurityData | undefined) ?? undefined;

    const write = (data: SecurityData): StoredRecord => {
      const d = data as Record<string, unknown>;
      return ov.put(ctx.batch, rec ? nextVersion(rec, { data: d }, now) : newRecord(ctx.tenant, SECURITY, d, { sk, now, state: 'active' }));
    };
    const need = (): SecurityData => {
      if (!cur) throw appError('ERR_NOT_FOUND', 'credentials');
      return cur;
    };
    /** The step a fresh (never used) TOTP code matches, or undefined. */
    const totpStep = (data: SecurityData, code: string): number | undefined => {
      if (!data.totpSecret) return undefined;
      const step = verifyTotp(base32Decode(data.totpSecret), code, now);
      return step === undefined || step <= (data.lastTotpStep ?? -1) ? undefined : step;
    };
    /** The backup record and the index of the unused code `code` matches, or undefined. */
    const backupMatch = (code: string): { b: StoredRecord; idx: number } | undefined => {
      const b = ov.get(BACKUP, sk);
      if (!b) return undefined;
      const h = backupCodeHash(sk, code);
      const idx = (b.data as unknown as BackupData).codes.findIndex((c) => !c.usedAt && safeEqual(c.hash, h));
      return idx < 0 ? undefined : { b, idx };
    };

    /**
     * Credentials set before the account proved `email` were set by whoever typed the address,
     * who may not be its owner (account pre-hijacking): the password, PIN and every second factor
     * go, with the backup codes.
     */
    const unprovenCredentialsDropped = (data: SecurityData): SecurityData => {
      const {
        passwordHash: _h,
        passwordChangedAt: _c,
        pinHash: _p,
        pinChangedAt: _pc,
        totpSecret: _s,
        totpPending: _tp,
        totpPendingAt: _ta,
        lastTotpStep: _l,
        twoFactorMethod: _m,
        twoFactorEnabled: _e,
        ...rest
      } = data;
      ov.delete(ctx.batch, BACKUP, sk);
      return rest as SecurityData;
    };
    const hadCredentials = (data: SecurityData | undefined): boolean =>
      !!(data?.passwordHash || data?.pinHash || data?.totpSecret || data?.twoFactorEnabled);

    switch (msg.type) {
      case 'proveEmail': {
        const base = cur ?? { subjectType: msg.subjectType };
        if (base.emailProven === msg.email) return { ok: true, tookOver: false } satisfies ProofResult;
        const takeOver = msg.takeOver && hadCredentials(cur);
        const data = takeOver ? unprovenCredentialsDropped(base) : base;
        write({ ...data, emailProven: msg.email, emailProvenAt: iso });
        if (!takeOver) return { ok: true, tookOver: false } satisfies ProofResult;
        // Same batch: the squatter's sessions end with the credentials, on every node.
        revoke(ctx.batch, ctx.tenant, sk, now, 'address proven by its owner');
        return { ok: true, tookOver: true, revokedAt: now } satisfies ProofResult;
      }
      case 'resetPassword': {
        const base = cur ?? { subjectType: msg.subjectType };
        const takeOver = base.emailProven !== msg.email && hadCredentials(cur);
        const data = takeOver ? unprovenCredentialsDropped(base) : base;
        write({ ...data, passwordHash: msg.hash, passwordChangedAt: iso, emailProven: msg.email, emailProvenAt: base.emailProven === msg.email ? (base.emailProvenAt ?? iso) : iso });
        revoke(ctx.batch, ctx.tenant, sk, now, 'password reset');
        return { ok: true, tookOver: takeOver, revokedAt: now } satisfies ProofResult;
      }
      case 'setPassword':
        write({ ...(cur ?? { subjectType: msg.subjectType }), passwordHash: msg.hash, passwordChangedAt: iso });
        return { ok: true };
      case 'setPin':
        write({ ...(cur ?? { subjectType: 'user' }), pinHash: msg.hash, pinChangedAt: iso });
        return { ok: true };
      case 'removePin': {
        if (!cur?.pinHash) return { ok: true, removed: false };
        const { pinHash: _p, pinChangedAt: _c, ...rest } = cur;
        write(rest as SecurityData);
        return { ok: true, removed: true };
      }
      case 'totpBegin':
        write({ ...(cur ?? { subjectType: msg.subjectType }), totpPending: msg.secret, totpPendingAt: now });
        return { ok: true };
      case 'totpConfirm': {
        const data = cur;
        if (!data?.totpPending || (data.totpPendingAt ?? 0) + TOTP_PENDING_MS < now) {
          throw appError('ERR_BAD_REQUEST', 'no authenticator enrolment is in progress; call /profile/security/totp/setup first');
        }
        const step = verifyTotp(base32Decode(data.totpPending), msg.code, now);
        if (step === undefined) return { ok: false };
        const { totpPending: secret, totpPendingAt: _a, ...rest } = data;
        write({ ...rest, totpSecret: secret, lastTotpStep: step, twoFactorEnabled: true, twoFactorMethod: 'authenticator' });
        return { ok: true };
      }
      case 'enable': {
        const data = cur ?? { subjectType: msg.subjectType };
        if (msg.method === 'authenticator' && !data.totpSecret) {
          throw appError('ERR_BAD_REQUEST', 'enrol an authenticator first (/profile/security/totp/setup and /totp/verify)');
        }
        write({ ...data, twoFactorEnabled: true, twoFactorMethod: msg.method });
        return { ok: true };
      }
      case 'disable': {
        if (!cur?.twoFactorEnabled) return { ok: true };
        // Turning an authenticator off needs proof of holding it (a current code or a backup code).
        if (cur.totpSecret && cur.twoFactorMethod === 'authenticator') {
          const code = msg.code ?? '';
          if (totpStep(cur, code) === undefined && !backupMatch(code)) return { ok: false };
        }
        const { totpSecret: _s, totpPending: _p, totpPendingAt: _a, lastTotpStep: _l, twoFactorMethod: _m, ...rest } = cur;
        write({ ...rest, twoFactorEnabled: false });
        ov.delete(ctx.batch, BACKUP, sk);
        return { ok: true };
      }
      case 'setBackup': {
        need();
        const data: BackupData = { codes: msg.hashes.map((hash) => ({ hash })), generatedAt: iso };
        const prev = ov.get(BACKUP, sk);
        const d = data as unknown as Record<string, unknown>;
        ov.put(ctx.batch, prev ? nextVersion(prev, { data: d }, now) : newRecord(ctx.tenant, BACKUP, d, { sk, now, state: 'active' }));
        return { ok: true };
      }
      case 'consume': {
        if (!cur) return { ok: false } satisfies ConsumeResult;
        const step = totpStep(cur, msg.code);
        if (step !== undefined) {
          write({ ...cur, lastTotpStep: step });
          return { ok: true, via: 'totp' } satisfies ConsumeResult;
        }
        const m = backupMatch(msg.code);
        if (m) {
          const data = m.b.data as unknown as BackupData;
          const codes = data.codes.map((c, i) => (i === m.idx ? { ...c, usedAt: iso } : c));
          ov.put(ctx.batch, nextVersion(m.b, { data: { ...data, codes } as unknown as Record<string, unknown> }, now));
          return { ok: true, via: 'backup' } satisfies ConsumeResult;
        }
        return { ok: false } satisfies ConsumeResult;
      }
    }
  },
};
