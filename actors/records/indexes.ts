// Indexes an organisation declares on its datatypes (core/store/tenant-indexes.ts), as the
// records area offers them: declared by its Admins, listed beside the modules' own, deleted.
// The store builds, keeps and uses them; this file decides who may index what.
import { appError } from '../../core/errors.js';
import type { Store } from '../../core/store/store.js';
import type { BuiltInIndex, TenantIndex, TenantIndexSpec } from '../../core/store/tenant-indexes.js';
import { SENSITIVE_DATATYPES, UNREADABLE_DATATYPES } from './policy.js';

/** A module's index as listed: its id names it, and it cannot be deleted. */
export type ListedBuiltIn = BuiltInIndex & { id: string; state: 'ready' };

const BUILT_IN_PREFIX = 'builtin:';

/**
 * Declares an index (building in the background): 403 on account and credential datatypes (an
 * index would let their values be probed, and a unique one could refuse the account writes of
 * sign-in), otherwise as the store says (400 path, 409 indexed already or `max` reached).
 */
export function declareIndex(store: Store, tenant: string, spec: TenantIndexSpec, max: number): Promise<TenantIndex> {
  if (SENSITIVE_DATATYPES.has(spec.datatype) || UNREADABLE_DATATYPES.has(spec.datatype)) {
    throw appError('ERR_FORBIDDEN', `${spec.datatype} records hold account data: they cannot be indexed through the record store`);
  }
  return store.declareTenantIndex(tenant, spec, max);
}

export function listIndexes(store: Store, tenant: string): { declared: TenantIndex[]; builtIn: ListedBuiltIn[] } {
  const { declared, builtIn } = store.tenantIndexes(tenant);
  return {
    declared,
    builtIn: builtIn.map((b) => ({ id: `${BUILT_IN_PREFIX}${b.datatype}:${b.path}`, ...b, state: 'ready' as const })),
  };
}

export function getIndex(store: Store, tenant: string, id: string): TenantIndex {
  const d = store.tenantIndex(tenant, id);
  if (!d) throw appError('ERR_NOT_FOUND', `index ${id}`);
  return d;
}

/** Deletes a declared index: 403 for a module's (the platform's own reads rely on it), 404 for none of the tenant's. */
export function dropIndex(store: Store, tenant: string, id: string): Promise<void> {
  if (id.startsWith(BUILT_IN_PREFIX)) throw appError('ERR_FORBIDDEN', 'a built-in index cannot be deleted: the platform\'s own reads rely on it');
  return store.dropTenantIndex(tenant, id);
}
