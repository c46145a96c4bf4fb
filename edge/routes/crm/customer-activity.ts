// Customer activity (spec: Endpoints → CRM (staff)): record what a person did, read it back as a
// timeline or a summary, and erase all of it (the right to erasure).
import { Type } from '@sinclair/typebox';
import { ACTIVITY_TYPES, normalizeEmail, type CrmApi } from '../../../actors/crm/index.js';
import { route, type RouteDef } from '../../route.js';
import { crmList } from './listing.js';
import { Enum, Email, ListOf, PageProps, RecordOf, SinceUntilProps } from './schemas.js';

const TAG = 'Customer activity';
const Type_ = Enum(ACTIVITY_TYPES);
const ActivityRecord = RecordOf(
  Type.Object(
    {
      email: Type.String(),
      type: Type.String(),
      name: Type.String(),
      importance: Type.Number(),
      properties: Type.Object({}, { additionalProperties: true }),
      at: Type.String(),
    },
    { additionalProperties: true },
  ),
);
const Named = Type.Array(Type.Object({ name: Type.String(), count: Type.Integer() }));

export function customerActivityRoutes(crm: CrmApi): RouteDef[] {
  return [
    route({
      method: 'POST',
      path: '/crm/customer-activity/record',
      auth: 'staff',
      tag: TAG,
      summary: 'Record one activity of a person',
      description:
        'Types: `screen_view`, `action`, `search`, `event_action`. `importance` (1-5) defaults by type: screen view 1, search and action 2, event action 3, and 5 for a ticket purchase (an event action named like `ticket_purchase`). `at` defaults to now.',
      status: 201,
      body: Type.Object({
        email: Email,
        type: Type_,
        name: Type.String({ minLength: 1, maxLength: 200 }),
        importance: Type.Optional(Type.Integer({ minimum: 1, maximum: 5 })),
        properties: Type.Optional(Type.Object({}, { additionalProperties: true })),
        at: Type.Optional(Type.String({ format: 'date-time' })),
      }),
      response: ActivityRecord,
      handler: (ctx) => crm.recordActivity(ctx.tenant, ctx.body),
    }),
    route({
      method: 'GET',
      path: '/crm/customer-activity/:email/timeline',
      auth: 'staff',
      tag: TAG,
      summary: "A person's activity, newest first",
      params: Type.Object({ email: Email }),
      query: Type.Object({ type: Type.Optional(Type_), ...SinceUntilProps, ...PageProps }),
      response: ListOf(ActivityRecord),
      handler: (ctx) => crmList(ctx, { list: 'activity-timeline', ...ctx.query, email: normalizeEmail(ctx.params.email) }),
    }),
    route({
      method: 'GET',
      path: '/crm/customer-activity/:email/summary',
      auth: 'staff',
      tag: TAG,
      summary: "A person's activity in figures",
      description:
        'Counts per type, first and last seen, the five most viewed screens and most frequent actions, and an engagement score: the sum of importance, each activity weighted by recency (half-life 30 days), capped at 100. A person with no activity answers zeros and nulls.',
      params: Type.Object({ email: Email }),
      response: Type.Object({
        email: Type.String(),
        total: Type.Integer(),
        byType: Type.Object(Object.fromEntries(ACTIVITY_TYPES.map((t) => [t, Type.Integer()]))),
        firstSeen: Type.Union([Type.String(), Type.Null()]),
        lastSeen: Type.Union([Type.String(), Type.Null()]),
        topScreens: Named,
        topActions: Named,
        engagementScore: Type.Number(),
      }),
      handler: (ctx) => crmList(ctx, { list: 'activity-summary', email: normalizeEmail(ctx.params.email), now: ctx.deps.clock.now() }),
    }),
    route({
      method: 'POST',
      path: '/crm/customer-activity/erase',
      auth: 'staff',
      tag: TAG,
      summary: "Erase every activity record of a person (right to erasure)",
      description: 'Answers how many records were removed. Other people\'s activity is untouched.',
      body: Type.Object({ email: Email }),
      response: Type.Object({ email: Type.String(), erased: Type.Integer() }),
      handler: (ctx) => crm.eraseActivity(ctx.tenant, ctx.body.email),
    }),
  ];
}
