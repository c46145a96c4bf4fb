// Staff accounts an Admin manages: creating a user (within the roles the caller holds) and
// disabling or re-enabling one.
import { hashPassword } from '../../core/auth/password.js';
import type { Principal } from '../../core/auth/tokens.js';
import { appError } from '../../core/errors.js';
import type { StoredRecord } from '../../core/store/record.js';
import type { AccountLookup } from './account-lookup.js';
import { ACCOUNTS, type AccountsMsg } from './messages.js';
import type { AuthDeps } from './deps.js';
import { PRIVILEGED_ROLES, SYSTEM_GROUP, isApp, normalizeEmail, type UserData } from './model.js';

/** A staff user as the employee list answers it. */
export interface EmployeeView {
  id: string;
  name?: string;
  email?: string;
  employeeId: string | null;
  roles: string[];
  status: string;
  hasPasscode: boolean;
}

export class StaffAccounts {
  constructor(
    private readonly deps: AuthDeps,
    private readonly accounts: AccountLookup,
  ) {}

  /** A page of user records as employees (applications left out), with whether each has a PIN. */
  employees(tenant: string, users: readonly StoredRecord[]): EmployeeView[] {
    return users
      .filter((u) => !isApp(u))
      .map((u) => {
        const d = u.data as UserData;
        return {
          id: u.sk,
          ...(d.name ? { name: d.name } : {}),
          ...(d.email ? { email: d.email } : {}),
          employeeId: d.employeeId ?? null,
          roles: [...(d.roles ?? [])],
          status: d.status ?? 'active',
          hasPasscode: !!this.accounts.security(tenant, u.sk)?.pinHash,
        };
      });
  }

  /**
   * Creates a staff user. The roles that carry this service's privileges (Admin, ConfigAdmin) are
   * granted only by a caller who holds them, so an Admin cannot make a ConfigAdmin (as a key
   * cannot carry roles its owner lacks); other role names carry no privilege here and any Admin
   * may give them.
   */
  async create(
    tenant: string,
    input: { email: string; password: string; name?: string; roles?: string[]; employeeId?: string; phone?: string },
    by: string,
    callerRoles: readonly string[],
  ): Promise<StoredRecord> {
    const roles = [...new Set(['User', ...(input.roles ?? [])])];
    if (roles.includes(SYSTEM_GROUP)) throw appError('ERR_VALIDATION', `body/roles must not contain ${SYSTEM_GROUP} (applications are registered at /profile/app/register)`);
    const beyond = roles.filter((r) => PRIVILEGED_ROLES.includes(r) && !callerRoles.includes(r));
    if (beyond.length) throw appError('ERR_FORBIDDEN', `only a holder of a role may grant it: you do not hold ${beyond.join(', ')}`);
    const passwordHash = await hashPassword(input.password);
    const msg: AccountsMsg = { type: 'createUser', email: normalizeEmail(input.email), roles, passwordHash, createdBy: by };
    if (input.name?.trim()) msg.name = input.name.trim();
    if (input.employeeId) msg.employeeId = input.employeeId;
    if (input.phone) msg.phone = input.phone;
    return this.deps.runtime.ask<StoredRecord>(tenant, ACCOUNTS, 'staff', msg);
  }

  /** Disables or re-enables a staff user (role Admin). Disabling stops its tokens and API keys at once. */
  async setStatus(tenant: string, caller: Principal, userId: string, status: 'active' | 'disabled'): Promise<StoredRecord> {
    const user = this.accounts.userById(tenant, userId);
    if (!user) throw appError('ERR_NOT_FOUND', `user ${userId}`);
    if (user.sk === caller.sub) throw appError('ERR_FORBIDDEN', 'you cannot change the status of your own account');
    this.accounts.assertMayActFor(tenant, caller, user, 'change the status');
    return this.deps.runtime.ask<StoredRecord>(tenant, ACCOUNTS, 'staff', { type: 'setUserStatus', userId: user.sk, status, by: caller.sub } satisfies AccountsMsg);
  }
}
