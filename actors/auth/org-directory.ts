// Organisations as the sign-in screens see them: the one an `orgid` names, the ones an email has a
// staff account in (most recently used first), and an organisation's storage usage against its
// plan's quotas.
import { orgById } from '../../core/auth/org-lookup.js';
import type { Org, Store } from '../../core/store/store.js';
import type { QuotaPolicy } from '../../core/store/usage.js';
import { GLOBAL_TENANT, NS, normalizeEmail, type DirectoryEntry } from './model.js';

export interface DirectoryOrg {
  orgId: string;
  displayName: string;
}

export interface OrgUsage {
  plan: string | null;
  records: { usedBytes: number; quotaBytes: number | null };
  media: { usedBytes: number; quotaBytes: number | null };
}

export class OrgDirectory {
  constructor(private readonly store: Store) {}

  /** The organisation a well-formed `orgid` names, if it exists. */
  org(orgid: string): Org | undefined {
    return orgById(this.store, orgid);
  }

  /** The organisations `email` has a staff account in, most recently used first. */
  orgsOf(email: string): DirectoryOrg[] {
    const entries = this.store.listKv<DirectoryEntry>(GLOBAL_TENANT, NS.directory(normalizeEmail(email)));
    entries.sort((a, b) => b.value.lastUsedAt - a.value.lastUsedAt || b.value.addedAt - a.value.addedAt || (a.key < b.key ? -1 : 1));
    const orgs: DirectoryOrg[] = [];
    for (const { key } of entries) {
      const org = this.store.getOrg(key);
      if (org) orgs.push({ orgId: org.orgId, displayName: String(org.displayName ?? org.orgId) });
    }
    return orgs;
  }

  /** Bytes stored by the organisation against its plan's quotas (none when quotas are off). */
  usage(tenant: string, quota: QuotaPolicy | undefined): OrgUsage {
    const used = this.store.usage(tenant);
    const limits = quota?.limitsOf(tenant, this.store.getOrg(tenant));
    return {
      plan: limits?.plan ?? null,
      records: { usedBytes: used.recordBytes, quotaBytes: limits?.recordBytes ?? null },
      media: { usedBytes: used.mediaBytes, quotaBytes: limits?.mediaBytes ?? null },
    };
  }
}
