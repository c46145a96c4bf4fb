// Self-service sign-up: a new organisation with its founder, or a customer of an organisation.
import { hashPassword } from '../../core/auth/password.js';
import type { Subject } from './account-lookup.js';
import { ACCOUNTS, ORGS, type AccountsMsg, type CreatedOrg, type CreateOrgMsg } from './messages.js';
import type { ClientInfo } from './client-info.js';
import type { AuthDeps } from './deps.js';
import type { EmailVerification } from './email-verification.js';
import { GLOBAL_TENANT, normalizeEmail } from './model.js';
import type { SessionAnswer, Sessions } from './sessions.js';
import type { StoredRecord } from '../../core/store/record.js';

export class SignUp {
  constructor(
    private readonly deps: AuthDeps,
    private readonly sessions: Sessions,
    private readonly verification: EmailVerification,
  ) {}

  async org(input: { email: string; password: string; name?: string; orgName: string; openStorefront?: boolean }, info: ClientInfo): Promise<SessionAnswer> {
    const passwordHash = await hashPassword(input.password);
    const msg: CreateOrgMsg = { type: 'createOrg', orgName: input.orgName.trim(), email: normalizeEmail(input.email), passwordHash };
    if (input.name?.trim()) msg.name = input.name.trim();
    const plan = this.deps.config.rateLimits?.signupPlan;
    if (plan) msg.plan = plan;
    if (input.openStorefront === true) msg.openStorefront = true;
    const { org, user } = await this.deps.runtime.ask<CreatedOrg>(GLOBAL_TENANT, ORGS, 'orgs', msg);
    this.deps.logger.info({ orgId: org.orgId }, 'organisation created');
    return this.sessions.issue(org.orgId, { kind: 'staff', rec: user }, info);
  }

  async customer(tenant: string, input: { email: string; password: string; name?: string; phone?: string }, info: ClientInfo): Promise<SessionAnswer> {
    const passwordHash = await hashPassword(input.password);
    const msg: AccountsMsg = { type: 'createCustomer', email: normalizeEmail(input.email), passwordHash };
    if (input.name?.trim()) msg.name = input.name.trim();
    if (input.phone) msg.phone = input.phone;
    const { customer } = await this.deps.runtime.ask<{ customer: StoredRecord }>(tenant, ACCOUNTS, 'customer', msg);
    const s: Subject = { kind: 'customer', rec: customer };
    // The address claims nothing until its owner redeems this code (email-verification.ts).
    await this.verification.sendFor(tenant, s);
    return this.sessions.issue(tenant, s, info);
  }
}
