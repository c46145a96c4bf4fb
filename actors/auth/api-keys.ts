// API keys: created by a staff user for itself, carrying at most the roles it holds, and resolved
// from the x-api-key header on every request.
import { digestSecret, newSecret } from '../../core/auth/password.js';
import type { Principal } from '../../core/auth/tokens.js';
import { appError } from '../../core/errors.js';
import type { StoredRecord } from '../../core/store/record.js';
import type { AccountLookup } from './account-lookup.js';
import { ACCOUNTS, type AccountsMsg } from './messages.js';
import type { AuthDeps } from './deps.js';
import { APIKEY, type ApiKeyData, type UserData } from './model.js';

export class ApiKeys {
  constructor(
    private readonly deps: AuthDeps,
    private readonly accounts: AccountLookup,
  ) {}

  async create(tenant: string, caller: Principal, body: { name: string; roles?: string[]; expiresAt?: string }): Promise<{ rec: StoredRecord; key: string }> {
    const owner = this.accounts.userById(tenant, caller.sub);
    if (!owner) throw appError('ERR_UNAUTHENTICATED', 'the account no longer exists');
    const held = (owner.data as UserData).roles ?? [];
    const roles = [...new Set(['User', ...(body.roles ?? held)])];
    const extra = roles.filter((r) => !held.includes(r));
    if (extra.length) throw appError('ERR_FORBIDDEN', `a key cannot carry roles its owner does not hold: ${extra.join(', ')}`);
    if (body.expiresAt && Date.parse(body.expiresAt) <= this.deps.clock.now()) throw appError('ERR_VALIDATION', 'body/expiresAt must be in the future');
    const key = newSecret('bpk_');
    const data: ApiKeyData = { name: body.name, keyHash: digestSecret(key), prefix: key.slice(0, 10), roles, ownerId: owner.sk, createdBy: caller.sub };
    if (body.expiresAt) data.expiresAt = new Date(body.expiresAt).toISOString();
    const rec = await this.deps.runtime.ask<StoredRecord>(tenant, ACCOUNTS, 'staff', { type: 'createApiKey', data } satisfies AccountsMsg);
    return { rec, key };
  }

  /**
   * The x-api-key credential (spec: Authentication → Headers): looked up by its hash on every
   * request (an LMDB index read), so a deleted key is refused at once. It acts as its owner, with
   * the key's roles narrowed to those the owner still holds.
   */
  resolve(headers: Readonly<Record<string, string>>, tenant: string | undefined): Principal | undefined {
    const key = headers['x-api-key'];
    if (!key) return undefined;
    if (!tenant) throw appError('ERR_UNAUTHENTICATED', 'x-api-key must be sent with the orgid header');
    const rec = this.deps.store.scan(tenant, APIKEY, { 'data.keyHash': digestSecret(key.trim()) })[0];
    const d = rec?.data as unknown as ApiKeyData | undefined;
    if (!d) throw appError('ERR_UNAUTHENTICATED', 'the API key is not valid for this organisation');
    if (d.expiresAt && Date.parse(d.expiresAt) <= this.deps.clock.now()) throw appError('ERR_UNAUTHENTICATED', 'the API key has expired');
    const owner = this.accounts.userById(tenant, d.ownerId);
    const od = owner?.data as UserData | undefined;
    if (!owner || od?.status !== 'active') throw appError('ERR_UNAUTHENTICATED', 'the API key owner no longer has access');
    const roles = d.roles.filter((r) => (od.roles ?? []).includes(r));
    return { sub: owner.sk, org: tenant, roles, kind: 'staff', ...(od.email ? { email: od.email } : {}), via: 'api-key' };
  }
}
