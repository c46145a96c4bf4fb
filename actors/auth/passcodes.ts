// Passcodes and access cards (spec: Passcodes and access cards): quick staff sign-in with an
// employee id plus a PIN and/or a card, and registering or blocking cards.
import { verifyPassword } from '../../core/auth/password.js';
import type { Principal } from '../../core/auth/tokens.js';
import { AppError, appError } from '../../core/errors.js';
import type { StoredRecord } from '../../core/store/record.js';
import type { AccountLookup } from './account-lookup.js';
import { CARD_ACTOR, type CardMsg } from './messages.js';
import type { ClientInfo } from './client-info.js';
import type { AuthDeps } from './deps.js';
import { DEVICE_TOKEN_NS, deviceEntryLive, parseDeviceToken, type DeviceEntry } from './device-token.js';
import type { FailureLimiter } from './limiter.js';
import { SETTING, type CardData, type UserData } from './model.js';
import type { SessionAnswer, Sessions } from './sessions.js';

export interface PasscodeSettings {
  enable: boolean;
  mode: string;
}

export class Passcodes {
  constructor(
    private readonly deps: AuthDeps,
    private readonly accounts: AccountLookup,
    private readonly sessions: Sessions,
    private readonly limiter: FailureLimiter,
  ) {}

  settings(tenant: string): PasscodeSettings {
    const doc = this.deps.store.scan(tenant, SETTING, { 'data.name': 'base-setting' })[0];
    const s = (doc?.data.passcodeLoginSettings ?? {}) as Record<string, unknown>;
    return { enable: s.enable === true, mode: typeof s.mode === 'string' ? s.mode : 'either' };
  }

  /**
   * Quick sign-in with employee id plus PIN and/or card (spec: Passcodes and access cards). The
   * org is the `orgid` header's, else the one the device's x-device-token was issued for (the
   * device's last sign-in; device-token.ts). x-device-id selects nothing. No 2FA or new-device
   * challenge (spec: Sign-in sequence 7). `passcodeLoginSettings.mode`: `pin` needs the PIN,
   * `card` the card, `both` (or `pin_and_card`) both; anything else accepts either.
   */
  async signIn(headerTenant: string, body: { employeeId: string; pin?: string; cardUid?: string }, info: ClientInfo): Promise<SessionAnswer> {
    let tenant = headerTenant;
    if (!tenant) {
      const sent = parseDeviceToken(info.deviceToken);
      const live =
        sent && this.deps.store.getOrg(sent.tenant) && deviceEntryLive(this.deps.store.getKv<DeviceEntry>(sent.tenant, DEVICE_TOKEN_NS, sent.key), this.deps.clock.now());
      if (!sent || !live) {
        throw appError(
          'ERR_BAD_REQUEST',
          info.deviceToken
            ? 'send the orgid header: this x-device-token is not valid (unknown, or unused for 90 days); sign in once with orgid for a new one'
            : 'send the orgid header, or the x-device-token this device was given at its last staff sign-in (x-device-id does not select an organisation)',
        );
      }
      tenant = sent.tenant;
    }
    const settings = this.settings(tenant);
    if (!settings.enable) throw appError('ERR_FORBIDDEN', 'passcode sign-in is disabled for this organisation');
    const { employeeId, pin, cardUid } = body;
    const mode = settings.mode.toLowerCase();
    if (!pin && !cardUid) throw appError('ERR_VALIDATION', 'body/pin or body/cardUid is required');
    if (mode === 'pin' && !pin) throw appError('ERR_VALIDATION', 'body/pin is required: this organisation signs in with a PIN');
    if (mode === 'card' && !cardUid) throw appError('ERR_VALIDATION', 'body/cardUid is required: this organisation signs in with a card');
    if ((mode === 'both' || mode === 'pin_and_card') && !(pin && cardUid)) {
      throw appError('ERR_VALIDATION', 'body/pin and body/cardUid are both required in this organisation');
    }
    const attempt = this.limiter.attempt(`pc:${tenant}:${employeeId}`, info.ip);
    attempt.check();
    const failed = (err: AppError): AppError => {
      attempt.fail();
      return err;
    };
    const user = this.accounts.userByEmployeeId(tenant, employeeId);
    if (cardUid) {
      const card = this.accounts.cardByUid(tenant, cardUid);
      const d = card?.data as unknown as CardData | undefined;
      if (!d || !user || d.userId !== user.sk || d.employeeId !== employeeId) throw failed(appError('ERR_UNAUTHENTICATED', 'the employee id or card is not right'));
      if (d.status !== 'active') throw failed(appError('ERR_FORBIDDEN', `this card is ${d.status}; it cannot be used to sign in`));
    }
    if (pin) {
      const ok = await verifyPassword(pin, user ? this.accounts.security(tenant, user.sk)?.pinHash : undefined);
      if (!ok || !user) throw failed(appError('ERR_UNAUTHENTICATED', 'the employee id or PIN is not right'));
    }
    const s = user ? this.accounts.subject(tenant, 'staff', user.sk) : undefined;
    if (!s) throw failed(appError('ERR_UNAUTHENTICATED', 'the employee id is not right'));
    attempt.succeed();
    return this.sessions.issue(tenant, s, info);
  }

  async registerCard(tenant: string, caller: Principal, body: { employeeId: string; cardUid: string; label?: string }): Promise<StoredRecord> {
    const user = this.accounts.userByEmployeeId(tenant, body.employeeId);
    if (!user) throw appError('ERR_NOT_FOUND', `employee ${body.employeeId}`);
    if (caller.roles.includes('Admin')) this.accounts.assertMayActFor(tenant, caller, user, 'register a card');
    const msg: CardMsg = { type: 'register', employeeId: body.employeeId, userId: user.sk, caller: this.cardCaller(tenant, caller) };
    if (body.label) msg.label = body.label;
    return this.deps.runtime.ask<StoredRecord>(tenant, CARD_ACTOR, body.cardUid, msg);
  }

  async setCardStatus(tenant: string, caller: Principal, cardUid: string, status: CardData['status']): Promise<StoredRecord> {
    // Re-activating a card makes it sign in as its holder again: the same rule as registering one.
    const holderId = (this.accounts.cardByUid(tenant, cardUid)?.data as unknown as CardData | undefined)?.userId;
    const holder = holderId ? this.accounts.userById(tenant, holderId) : undefined;
    if (status === 'active' && holder && caller.roles.includes('Admin')) this.accounts.assertMayActFor(tenant, caller, holder, 're-activate a card');
    return this.deps.runtime.ask<StoredRecord>(tenant, CARD_ACTOR, cardUid, { type: 'status', status, caller: this.cardCaller(tenant, caller) } satisfies CardMsg);
  }

  private cardCaller(tenant: string, p: Principal): { userId: string; employeeId?: string; admin: boolean } {
    const me = this.accounts.userById(tenant, p.sub);
    const employeeId = (me?.data as UserData | undefined)?.employeeId;
    return { userId: p.sub, admin: p.roles.includes('Admin'), ...(employeeId ? { employeeId } : {}) };
  }
}
