// Social sync (spec: `/sync/social-activities/*`): paged lists of comments, direct messages and
// engagement figures, fed by a connector through `POST /sync/social-activities/ingest` (staff
// Admin). An inbound direct message is also threaded into the inbox (channel `social`, contact
// `<platform>:<handle>`), so staff answer it where they answer everything else.
import { Type } from '@sinclair/typebox';
import { SOCIAL_KINDS, type CrmApi, type SocialItem, type SocialKind } from '../../../actors/crm/index.js';
import { AppError } from '../../../core/errors.js';
import type { Filter } from '../../../core/store/query.js';
import { route, type RouteDef } from '../../route.js';
import { crmList } from '../crm/listing.js';
import { Enum, ListOf, PageProps, RecordOf, SinceUntilProps } from '../crm/schemas.js';

const TAG = 'Social sync';
const MAX_ITEMS = 500;

const SocialRecord = RecordOf(
  Type.Object({}, {
    additionalProperties: true,
    description: 'kind, platform, externalId, postId, author {id, name, handle}, text, url, direction (messages), metrics (engagement), at, firstSeenAt',
  }),
);

const Item = Type.Object(
  {
    kind: Enum(SOCIAL_KINDS),
    platform: Type.String({ pattern: '^[A-Za-z0-9_-]{1,32}$', description: 'facebook, instagram, x, linkedin, tiktok, ...' }),
    externalId: Type.String({ minLength: 1, maxLength: 200, description: "The platform's id of the item; a repeat updates it" }),
    postId: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    author: Type.Optional(
      Type.Object({
        id: Type.Optional(Type.String({ maxLength: 200 })),
        name: Type.Optional(Type.String({ maxLength: 200 })),
        handle: Type.Optional(Type.String({ maxLength: 200 })),
      }),
    ),
    text: Type.Optional(Type.String({ maxLength: 20_000 })),
    url: Type.Optional(Type.String({ maxLength: 2000 })),
    direction: Type.Optional(Enum(['inbound', 'outbound'])),
    metrics: Type.Optional(Type.Record(Type.String(), Type.Number({ minimum: 0 }))),
    at: Type.Optional(Type.String({ format: 'date-time' })),
  },
  { additionalProperties: true },
);

/** What each kind must carry, beyond the common fields. */
function itemProblems(items: SocialItem[]): string[] {
  const out: string[] = [];
  items.forEach((it, i) => {
    const at = `body/items/${i}`;
    if ((it.kind === 'comment' || it.kind === 'message') && !it.text) out.push(`${at}/text is required for a ${it.kind}`);
    if (it.kind === 'message' && !it.author?.handle && !it.author?.id) out.push(`${at}/author/handle (or author/id) is required for a message`);
    if (it.kind === 'engagement' && (!it.metrics || Object.keys(it.metrics).length === 0)) out.push(`${at}/metrics is required for engagement`);
  });
  return out;
}

function listRoute(path: string, kind: SocialKind, summary: string): RouteDef {
  return route({
    method: 'GET',
    path,
    auth: 'staff',
    tag: TAG,
    summary,
    description: 'Newest first. Filters: platform, postId, since, until.',
    query: Type.Object({
      platform: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9_-]{1,32}$' })),
      postId: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
      ...SinceUntilProps,
      ...PageProps,
    }),
    response: ListOf(SocialRecord),
    handler: (ctx) => {
      const q = ctx.query;
      const f: Filter = { 'data.kind': kind };
      if (q.platform) f['data.platform'] = q.platform.toLowerCase();
      if (q.postId) f['data.postId'] = q.postId;
      return crmList(ctx, { list: 'social', ...q, filter: f });
    },
  });
}

export function socialRoutes(crm: CrmApi): RouteDef[] {
  return [
    listRoute('/sync/social-activities/comments', 'comment', 'Comments on the organisation\'s social posts'),
    listRoute('/sync/social-activities/messages', 'message', 'Direct messages on social platforms'),
    listRoute('/sync/social-activities/engagement', 'engagement', 'Engagement figures (likes, shares, views, ...) per post'),
    route({
      method: 'POST',
      path: '/sync/social-activities/ingest',
      auth: 'staff',
      roles: ['Admin'],
      tag: TAG,
      summary: 'Push social activity in (connectors)',
      description: `Up to ${MAX_ITEMS} items. Comments and messages need \`text\`, messages an author handle or id, engagement \`metrics\`. An item whose platform, kind and externalId were seen before is updated, not duplicated. New inbound messages are threaded into the inbox (channel social).`,
      body: Type.Object({ items: Type.Array(Item, { minItems: 1, maxItems: MAX_ITEMS }) }),
      response: Type.Object({ received: Type.Integer(), created: Type.Integer(), updated: Type.Integer(), threaded: Type.Integer() }),
      handler: async (ctx) => {
        const items = ctx.body.items as SocialItem[];
        const problems = itemProblems(items);
        if (problems.length) throw new AppError('ERR_VALIDATION', [problems.join('; ')], { messages: problems });
        return crm.ingestSocial(ctx.tenant, items);
      },
    }),
  ];
}
