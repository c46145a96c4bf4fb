// Account records of one organisation: staff users, applications, API keys (actor key `staff`) and
// customers (actor key `customer`). One mailbox per organisation and kind makes "this email (or
// employee id) is not taken yet" and the write that takes it one step, so two concurrent signups
// can never both win. Hashes arrive computed (scrypt runs outside the mailbox).
//
// The `staff` actor also records staff sign-ins (the directory entry's last use and the device
// token, device-token.ts), so the entries it creates and deletes with a user have one writer, and
// forgets the organisation's expired device tokens when the sweep asks (sweep.ts).
//
// Organisations themselves are created by `auth-orgs` under the `_global` pseudo-tenant: the new
// org, its primary contact's user record, credentials and directory entry in one atomic batch.
import type { ActivationContext, ActorContext, ActorKind } from '../../core/actor/runtime.js';
import { revoke } from '../../core/auth/revocations.js';
import { appError } from '../../core/errors.js';
import { queueEvent } from '../../core/webhooks/catalogue.js';
import { newRecord, nextVersion, type StoredRecord } from '../../core/store/record.js';
import type { Org } from '../../core/store/store.js';
import { newOrgReservationSettings, newOrgStorefrontSettings, RESERVATION_SETTINGS_FIELD } from '../org-settings/index.js';
import { APIKEY, BACKUP, CUSTOMER, DEFAULT_SECURITY_SETTINGS, FOUNDER_ROLES, GLOBAL_TENANT, NS, SECURITY, SYSTEM_GROUP, USER, isApp, orgSlug, type CustomerData, type DirectoryEntry, type SecurityData, type UserData } from './model.js';
import { DEVICE_TOKEN_NS, deviceEntryLive, newDeviceToken, parseDeviceToken, type DeviceEntry } from './device-token.js';
import { RecordOverlay } from './overlay.js';
import { ACCOUNTS, type AccountsMsg, type CreatedOrg, ORGS, type OrgsMsg } from './messages.js';

interface AccountsState {
  ov: RecordOverlay;
}

function usersByEmail(ov: RecordOverlay, email: string): StoredRecord[] {
  return ov.find(USER, { 'data.email': email }, (r) => (r.data as UserData).email === email && !isApp(r));
}

function usersByEmployeeId(ov: RecordOverlay, employeeId: string): StoredRecord[] {
  return ov.find(USER, { 'data.employeeId': employeeId }, (r) => (r.data as UserData).employeeId === employeeId);
}

function securityRecord(tenant: string, sk: string, data: SecurityData, now: number): StoredRecord {
  return newRecord(tenant, SECURITY, data as Record<string, unknown>, { sk, now, state: 'active' });
}

export const accountsActor: ActorKind<AccountsState, AccountsMsg, unknown> = {
  kind: ACCOUNTS,
  activate: (ctx: ActivationContext) => ({ ov: new RecordOverlay(ctx.store, ctx.tenant) }),
  receive(state, msg, ctx: ActorContext) {
    const { ov } = state;
    const now = ctx.clock.now();
    const iso = new Date(now).toISOString();
    switch (msg.type) {
      case 'createUser': {
        if (usersByEmail(ov, msg.email).length > 0) throw appError('ERR_CONFLICT', `a user with email ${msg.email} already exists in this organisation`);
        if (msg.employeeId && usersByEmployeeId(ov, msg.employeeId).length > 0) {
          throw appError('ERR_CONFLICT', `employee id ${msg.employeeId} is already taken in this organisation`);
        }
        const data: UserData = { email: msg.email, roles: msg.roles, status: 'active' };
        if (msg.name) data.name = msg.name;
        if (msg.employeeId) data.employeeId = msg.employeeId;
        if (msg.phone) data.phone = msg.phone;
        if (msg.createdBy) data.createdBy = msg.createdBy;
        const user = ov.put(ctx.batch, newRecord(ctx.tenant, USER, data, { now, state: 'active' }));
        ov.put(ctx.batch, securityRecord(ctx.tenant, user.sk, { subjectType: 'user', passwordHash: msg.passwordHash, passwordChangedAt: iso }, now));
        const entry: DirectoryEntry = { lastUsedAt: 0, addedAt: now };
        ctx.batch.putKv(GLOBAL_TENANT, NS.directory(msg.email), ctx.tenant, entry);
        return user;
      }
      case 'setEmployeeId': {
        const user = ov.get(USER, msg.userId);
        if (!user || isApp(user)) throw appError('ERR_NOT_FOUND', `user ${msg.userId}`);
        if ((user.data as UserData).employeeId === msg.employeeId) return user;
        if (usersByEmployeeId(ov, msg.employeeId).some((u) => u.sk !== user.sk)) {
          throw appError('ERR_CONFLICT', `employee id ${msg.employeeId} is already taken in this organisation`);
        }
        return ov.put(ctx.batch, nextVersion(user, { data: { ...user.data, employeeId: msg.employeeId } }, now));
      }
      case 'deleteUser': {
        const user = ov.get(USER, msg.userId);
        if (!user || isApp(user)) throw appError('ERR_NOT_FOUND', `user ${msg.userId}`);
        ov.delete(ctx.batch, USER, user.sk);
        ov.delete(ctx.batch, SECURITY, user.sk);
        ov.delete(ctx.batch, BACKUP, user.sk);
        const email = (user.data as UserData).email;
        if (email) ctx.batch.deleteKv(GLOBAL_TENANT, NS.directory(email), ctx.tenant);
        // Same batch: the account and every token it holds end together, on every node.
        revoke(ctx.batch, ctx.tenant, user.sk, now, 'deleted');
        return user;
      }
      case 'setUserStatus': {
        const user = ov.get(USER, msg.userId);
        if (!user || isApp(user)) throw appError('ERR_NOT_FOUND', `user ${msg.userId}`);
        if ((user.data as UserData).status === msg.status) return user;
        if (msg.status === 'disabled') revoke(ctx.batch, ctx.tenant, user.sk, now, 'disabled');
        const data: UserData = { ...(user.data as UserData), status: msg.status, statusChangedBy: msg.by, statusChangedAt: iso };
        return ov.put(ctx.batch, nextVersion(user, { state: msg.status, data }, now));
      }
      case 'createApp': {
        const data: UserData = {
          name: msg.name,
          roles: [SYSTEM_GROUP],
          group: SYSTEM_GROUP,
          kind: 'app',
          status: 'active',
          domains: msg.domains,
          createdBy: msg.createdBy,
        };
        const app = ov.put(ctx.batch, newRecord(ctx.tenant, USER, data, { now, state: 'active' }));
        ov.put(ctx.batch, securityRecord(ctx.tenant, app.sk, { subjectType: 'app', secretHash: msg.secretHash }, now));
        return app;
      }
      case 'revokeApp': {
        const app = ov.get(USER, msg.appId);
        if (!app || !isApp(app)) throw appError('ERR_NOT_FOUND', `application ${msg.appId}`);
        if ((app.data as UserData).status === 'revoked') return app;
        revoke(ctx.batch, ctx.tenant, app.sk, now, 'application revoked');
        return ov.put(
          ctx.batch,
          nextVersion(app, { state: 'revoked', data: { ...app.data, status: 'revoked', revokedBy: msg.by, revokedAt: iso } }, now),
        );
      }
      case 'createApiKey':
        return ov.put(ctx.batch, newRecord(ctx.tenant, APIKEY, msg.data as unknown as Record<string, unknown>, { now, state: 'active' }));
      case 'deleteApiKey': {
        const key = ov.get(APIKEY, msg.id);
        if (!key) throw appError('ERR_NOT_FOUND', `API key ${msg.id}`);
        ov.delete(ctx.batch, APIKEY, msg.id);
        return key;
      }
      case 'noteSignIn': {
        // The directory entry of a user deleted meanwhile stays deleted.
        if (msg.email && ov.get(USER, msg.userId)) {
          const prev = ctx.store.getKv<DirectoryEntry>(GLOBAL_TENANT, NS.directory(msg.email), ctx.tenant);
          ctx.batch.putKv(GLOBAL_TENANT, NS.directory(msg.email), ctx.tenant, { lastUsedAt: now, addedAt: prev?.addedAt ?? now } satisfies DirectoryEntry);
        }
        return { deviceToken: noteDevice(ctx, msg.deviceToken, now) };
      }
      case 'expireDeviceTokens': {
        let removed = 0;
        for (const key of msg.keys) {
          const entry = ctx.store.getKv<DeviceEntry>(ctx.tenant, DEVICE_TOKEN_NS, key);
          if (entry && !deviceEntryLive(entry, now)) {
            ctx.batch.deleteKv(ctx.tenant, DEVICE_TOKEN_NS, key);
            removed++;
          }
        }
        return removed;
      }
      case 'createCustomer': {
        // Customer records made for this address by a booking, a purchase or the CRM are not
        // claimed here: the sign-up only typed the address. The account gets a record of its own,
        // and sees those records once it proves the address (email-proof.ts customerIdsOf).
        const existing = ov.find(CUSTOMER, { 'data.email': msg.email }, (r) => (r.data as CustomerData).email === msg.email);
        const holder = existing.find((c) => {
          const sec = ov.get(SECURITY, c.sk)?.data as SecurityData | undefined;
          return !!(sec?.passwordHash || sec?.emailProven);
        });
        if (holder) {
          throw appError(
            'ERR_CONFLICT',
            `a customer account with email ${msg.email} already exists in this organisation; if the address is yours, sign in with a code sent to it (GET /profile/user/magic-link) or reset the password (POST /profile/password/forgot)`,
          );
        }
        const data: CustomerData = { email: msg.email, status: 'active' };
        if (msg.name) data.name = msg.name;
        if (msg.phone) data.phone = msg.phone;
        const customer = ov.put(ctx.batch, newRecord(ctx.tenant, CUSTOMER, data, { now, state: 'active' }));
        ov.put(ctx.batch, securityRecord(ctx.tenant, customer.sk, { subjectType: 'customer', passwordHash: msg.passwordHash, passwordChangedAt: iso }, now));
        queueEvent(ctx.services.webhooks, ctx.batch, ctx.tenant, 'customer.created', customer, now);
        return { customer, created: true };
      }
    }
  },
};

/**
 * The x-device-token sent is renewed and answered back when it was issued for this organisation;
 * otherwise (none, unknown, expired, or another organisation's) a new one is issued, and a token
 * of another organisation is left as it is: only its own organisation's sign-ins touch it.
 */
function noteDevice(ctx: ActorContext, sentToken: string | undefined, now: number): string {
  const sent = parseDeviceToken(sentToken);
  const held = sent?.tenant === ctx.tenant ? ctx.store.getKv<DeviceEntry>(ctx.tenant, DEVICE_TOKEN_NS, sent.key) : undefined;
  if (sent && sentToken && deviceEntryLive(held, now)) {
    ctx.batch.putKv(ctx.tenant, DEVICE_TOKEN_NS, sent.key, { ...held, usedAt: now } satisfies DeviceEntry);
    return sentToken;
  }
  const issued = newDeviceToken(ctx.tenant);
  ctx.batch.putKv(ctx.tenant, DEVICE_TOKEN_NS, issued.key, { createdAt: now, usedAt: now } satisfies DeviceEntry);
  return issued.token;
}

/**
 * Creates organisations (tenant `_global`, key `orgs`): ids stay unique within the mailbox. It
 * also owns the `_global` legacy device entries the sweep forgets.
 */
export const orgsActor: ActorKind<{ created: Set<string> }, OrgsMsg, CreatedOrg | number> = {
  kind: ORGS,
  activate: () => ({ created: new Set() }),
  receive(state, msg, ctx) {
    if (msg.type === 'forgetDeviceOrgs') {
      const entries = ctx.store.listKv(GLOBAL_TENANT, NS.deviceOrg);
      for (const { key } of entries) ctx.batch.deleteKv(GLOBAL_TENANT, NS.deviceOrg, key);
      return entries.length;
    }
    const now = ctx.clock.now();
    const iso = new Date(now).toISOString();
    let orgId = '';
    for (let i = 0; i < 8 && !orgId; i++) {
      const candidate = orgSlug(msg.orgName);
      if (!state.created.has(candidate) && !ctx.store.getOrg(candidate)) orgId = candidate;
    }
    if (!orgId) throw appError('ERR_CONFLICT', 'could not allocate an organisation id; try again');
    const data: UserData = { email: msg.email, roles: [...FOUNDER_ROLES], status: 'active' };
    if (msg.name) data.name = msg.name;
    const user = newRecord(orgId, USER, data, { now, state: 'active' });
    const sec = newRecord(orgId, SECURITY, { subjectType: 'user', passwordHash: msg.passwordHash, passwordChangedAt: iso } as Record<string, unknown>, {
      sk: user.sk,
      now,
      state: 'active',
    });
    const org: Org = {
      orgId,
      displayName: msg.orgName,
      createdate: iso,
      ...(msg.plan ? { plan: msg.plan } : {}),
      primaryContactUserId: user.sk,
      primaryContactEmail: msg.email,
      securitySettings: { ...DEFAULT_SECURITY_SETTINGS },
      settings: newOrgStorefrontSettings(msg.openStorefront === true),
      [RESERVATION_SETTINGS_FIELD]: newOrgReservationSettings(msg.openStorefront === true),
    };
    const entry: DirectoryEntry = { lastUsedAt: now, addedAt: now };
    ctx.batch.putOrg(org).putRecord(user, 0).putRecord(sec, 0).putKv(GLOBAL_TENANT, NS.directory(msg.email), orgId, entry);
    state.created.add(orgId);
    return { org, user };
  },
};
