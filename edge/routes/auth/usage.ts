// An organisation's storage usage against its plan's quotas (issue 29: storage quota per
// organisation), for its Admins. The figures are the store's counters (core/store/usage.ts), kept
// in each write's transaction, so reading them costs one lookup however much is stored.
import { Type } from '@sinclair/typebox';
import type { AuthApi } from '../../../actors/auth/index.js';
import type { Config } from '../../../core/config.js';
import { route, type RouteDef } from '../../route.js';
import { storageQuota } from '../../storage-quota.js';
import { TAG_AUTH } from './common.js';

const Usage = Type.Object({
  usedBytes: Type.Integer(),
  quotaBytes: Type.Union([Type.Integer(), Type.Null()], { description: 'null: no limit' }),
});

const UsageSchema = Type.Object({
  plan: Type.Union([Type.String(), Type.Null()], { description: 'The plan whose quotas apply; null when quotas are off' }),
  records: Type.Object(Usage.properties, {
    description: 'The stored (encoded) size of the organisation’s records, log entries (door scans, chat and community messages) and key-value entries; keys and indexes are not counted',
  }),
  media: Type.Object(Usage.properties, { description: 'The size of the organisation’s stored files (event media uploads)' }),
});

export function usageRoutes(svc: AuthApi, config: Config): RouteDef[] {
  const quota = storageQuota(config);
  return [
    route({
      method: 'GET',
      path: '/profile/org/usage',
      auth: 'staff',
      roles: ['Admin'],
      tag: TAG_AUTH,
      summary: "The organisation's storage usage and quotas",
      description:
        'Bytes stored, counted in the transaction of every write (an update counts its new size minus its old one, a delete ' +
        'takes its size off), against the quotas of the organisation’s plan. A record write that would take `records` past its ' +
        'quota, and an upload that would take `media` past its quota, answer 413 `ERR_STORAGE_QUOTA` naming the quota and the ' +
        'usage, and store nothing. Deletes always work, as do sign-ins, door scans, messages and the service’s own bookkeeping ' +
        '(they count, but are never refused by the quota). Separately, when the server’s disk is below its free-space floor, ' +
        'every write but a delete answers 507 `ERR_INSUFFICIENT_STORAGE`.',
      response: UsageSchema,
      handler: (ctx) => svc.orgs.usage(ctx.tenant, quota),
    }),
  ];
}
