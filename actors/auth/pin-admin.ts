// Setting and removing staff PINs, and how much of a card UID a caller sees (spec: Passcodes and
// access cards). Whoever sets a PIN knows it and can sign in with it, skipping 2FA; a card UID is
// what a reader presents to sign in. So both follow the rule for acting for another user
// (account-lookup.ts: assertMayActFor).
import { hashPassword } from '../../core/auth/password.js';
import type { Principal } from '../../core/auth/tokens.js';
import { appError } from '../../core/errors.js';
import type { StoredRecord } from '../../core/store/record.js';
import type { AccountLookup } from './account-lookup.js';

import type { AuthDeps } from './deps.js';
import { publicCard, type PublicCard, type UserData } from './model.js';
import { ACCOUNTS, type AccountsMsg, SECURITY_ACTOR, type SecurityMsg } from './messages.js';

export class PinAdmin {
  constructor(
    private readonly deps: AuthDeps,
    private readonly accounts: AccountLookup,
  ) {}

  /**
   * The user a passcode change acts on: yourself, or (role Admin) `userId` when you hold every role
   * that user holds and it is not the primary contact.
   */
  targetUser(tenant: string, p: Principal, userId: string | undefined): StoredRecord {
    const id = userId ?? p.sub;
    if (id !== p.sub && !p.roles.includes('Admin')) throw appError('ERR_FORBIDDEN', "only an Admin may change another user's passcode");
    const user = this.accounts.userById(tenant, id);
    if (!user) throw appError('ERR_NOT_FOUND', `user ${id}`);
    this.accounts.assertMayActFor(tenant, p, user, "change the passcode");
    return user;
  }

  /**
   * Sets the PIN of the target user (stored as a scrypt hash). The user needs an employee id to
   * sign in with it: `employeeId` gives one, or changes it (409 when another user holds it).
   */
  async set(tenant: string, p: Principal, body: { pin: string; employeeId?: string; userId?: string }): Promise<{ userId: string; employeeId: string; hasPasscode: true }> {
    const user = this.targetUser(tenant, p, body.userId);
    const current = (user.data as UserData).employeeId;
    const employeeId = body.employeeId ?? current;
    if (!employeeId) throw appError('ERR_VALIDATION', 'body/employeeId is required: this user has no employee id yet');
    const { runtime } = this.deps;
    if (employeeId !== current) {
      await runtime.ask(tenant, ACCOUNTS, 'staff', { type: 'setEmployeeId', userId: user.sk, employeeId } satisfies AccountsMsg);
    }
    const hash = await hashPassword(body.pin);
    await runtime.ask(tenant, SECURITY_ACTOR, user.sk, { type: 'setPin', hash } satisfies SecurityMsg);
    return { userId: user.sk, employeeId, hasPasscode: true };
  }

  /** Removes the target user's PIN; `removed` is false when there was none. */
  async remove(tenant: string, p: Principal, userId: string | undefined): Promise<{ userId: string; hasPasscode: false; removed: boolean }> {
    const user = this.targetUser(tenant, p, userId);
    const r = await this.deps.runtime.ask<{ removed: boolean }>(tenant, SECURITY_ACTOR, user.sk, { type: 'removePin' } satisfies SecurityMsg);
    return { userId: user.sk, hasPasscode: false, removed: r.removed };
  }

  /** A card as `p` may see it: in full to its holder and to Admins who may act for the holder, else its last 4 characters. */
  cardView(tenant: string, p: Principal, rec: StoredRecord): PublicCard {
    const card = publicCard(rec);
    const holder = this.accounts.userById(tenant, card.userId);
    if (card.userId === p.sub || (holder && !this.accounts.whyNotActFor(tenant, p, holder))) return card;
    return { ...card, cardUid: card.cardUid.length > 8 ? `…${card.cardUid.slice(-4)}` : '…' };
  }
}
