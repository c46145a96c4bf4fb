// Records every HTTP reply an auth test receives, then checks that none of them carries a
// credential: a password or PIN (as sent), any hash or TOTP secret found in the store, a code the
// outbox recorded, or a field named like a hash. The one-time disclosures the spec requires are
// allowed only in their own answer: an application secret (POST /profile/app/register), an API key
// (POST /profile/api-keys), a TOTP secret (POST /profile/security/totp/setup), backup codes
// (POST /profile/security/backup-codes) and a person's own codes in their local outbox listing
// (GET /profile/outbox/mine; never the Admin's GET /profile/outbox).
import type { Test } from 'tap';
import { BACKUP, SECURITY } from '../../actors/auth/model.js';
import { readOutbox } from '../../core/outbox.js';
import type { RunningApp } from '../../edge/app.js';
import { request, type Reply, type RequestOptions } from '../helpers/http.js';

interface Recorded {
  method: string;
  path: string;
  status: number;
  text: string;
}

const HASH_FIELDS = /"(passwordHash|pinHash|secretHash|keyHash|codeHash|totpSecret|totpPending|salt|hash)"\s*:/;

function escape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

export class LeakGuard {
  readonly replies: Recorded[] = [];
  /** value → "METHOD path" prefixes where it may appear. */
  private readonly values = new Map<string, Set<string>>();

  /** A sender that records each reply (pass it to the test/helpers/auth functions). */
  readonly send = async (app: RunningApp, path: string, opts: RequestOptions = {}): Promise<Reply> => {
    const r = await request(app.url, path, opts);
    this.replies.push({ method: opts.method ?? (opts.body !== undefined ? 'POST' : 'GET'), path: path.split('?')[0], status: r.status, text: r.text });
    return r;
  };

  /** The sender bound to one app, in the shape test/helpers/auth.ts takes. */
  sender(app: RunningApp) {
    return (path: string, opts: RequestOptions) => this.send(app, path, opts);
  }

  /** A client bound to one app with default headers, recording every reply. */
  client(app: RunningApp, defaults: Record<string, string> = {}) {
    const call = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
      this.send(app, path, { method, body, headers: { ...defaults, ...headers } });
    return {
      get: (path: string, headers?: Record<string, string>) => call('GET', path, undefined, headers),
      post: (path: string, body?: unknown, headers?: Record<string, string>) => call('POST', path, body ?? {}, headers),
      put: (path: string, body?: unknown, headers?: Record<string, string>) => call('PUT', path, body ?? {}, headers),
      del: (path: string, headers?: Record<string, string>) => call('DELETE', path, undefined, headers),
    };
  }

  /** A value no reply may contain, except those of `allowedIn` ("POST /profile/api-keys"). */
  secret(value: string | undefined, ...allowedIn: string[]): void {
    if (!value) return;
    const set = this.values.get(value) ?? new Set<string>();
    for (const a of allowedIn) set.add(a);
    this.values.set(value, set);
  }

  /** Adds every credential the store and the outbox hold for the given orgs. */
  harvest(app: RunningApp, orgIds: string[]): void {
    const { store } = app.deps;
    for (const org of orgIds) {
      for (const r of store.scan(org, SECURITY)) {
        for (const k of ['passwordHash', 'pinHash', 'secretHash', 'totpSecret', 'totpPending']) {
          const v = r.data[k];
          if (typeof v !== 'string') continue;
          this.secret(v, k === 'totpSecret' || k === 'totpPending' ? 'POST /profile/security/totp/setup' : '');
          // The hash part of a scrypt string on its own.
          const part = v.split('$').at(-1);
          if (part && part.length >= 16) this.secret(part);
        }
      }
      for (const r of store.scan(org, BACKUP)) {
        for (const c of (r.data.codes as Array<{ hash: string }>) ?? []) this.secret(c.hash);
      }
      for (const r of store.scan(org, 'apikey')) this.secret(String(r.data.keyHash));
      for (const ns of ['auth_challenge', 'auth_magic']) {
        for (const { value } of store.listKv<Record<string, unknown>>(org, ns)) {
          if (typeof value.codeHash === 'string') this.secret(value.codeHash);
          if (typeof value.salt === 'string') this.secret(value.salt);
        }
      }
      for (const m of readOutbox(store, org)) this.secret(m.code, 'GET /profile/outbox/mine');
    }
  }

  /** Fails `t` for every reply carrying a value outside its allowed answers. */
  check(t: Test): void {
    let looked = 0;
    const patterns = [...this.values].map(([value, allowed]) => ({
      value,
      allowed,
      // Short values (codes, PINs) only count as whole tokens, so an id that happens to contain
      // the same digits is not a false alarm.
      re: new RegExp(value.length < 12 ? `(?<![0-9A-Za-z])${escape(value)}(?![0-9A-Za-z])` : escape(value)),
    }));
    for (const r of this.replies) {
      looked++;
      const where = `${r.method} ${r.path}`;
      if (HASH_FIELDS.test(r.text)) t.fail(`${where} (${r.status}) has a hash-like field: ${r.text.slice(0, 300)}`);
      for (const p of patterns) {
        if ([...p.allowed].some((a) => a && where.startsWith(a))) continue;
        if (p.re.test(r.text)) t.fail(`${where} (${r.status}) carries a credential (${p.value.slice(0, 6)}…)`);
      }
    }
    t.ok(looked > 0, `checked ${looked} replies against ${patterns.length} credentials`);
  }
}
