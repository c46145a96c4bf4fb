// The store's quota policy from the configuration (issue 29: storage quota per organisation): a
// plan's quotas from `quotas.plans`, the plan picked as the rate limits pick it, and the datatypes
// of the service's own bookkeeping, which an organisation over its quota must still write to sign
// in, delete what it stores and hear about it.
import { BACKUP, SECURITY } from '../actors/auth/index.js';
import type { Config } from '../core/config.js';
import { OUTBOX_DATATYPE } from '../core/outbox.js';
import { planLimits, type QuotaPolicy } from '../core/store/usage.js';

export function storageQuota(config: Config): QuotaPolicy | undefined {
  if (!config.quotas.enabled) return undefined;
  const plans = config.quotas.plans;
  const defaultPlan = config.rateLimits.defaultPlan;
  return {
    // Only organisations have quotas: platform data (the directory, sessions) is the service's.
    limitsOf: (_tenant, org) => (org ? planLimits(plans, defaultPlan, org) : undefined),
    exemptDatatypes: new Set([SECURITY, BACKUP, OUTBOX_DATATYPE]),
  };
}
