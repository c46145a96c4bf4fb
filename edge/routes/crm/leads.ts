// CRM leads (spec: Endpoints → CRM (staff)): `GET|POST /crm/leads/detail`,
// `GET|PUT|DELETE /crm/leads/detail/:id`. Lead fields beyond the documented ones are kept as sent
// (the spec shows no lead schema); PUT takes the spec's update body `{data, version}` and answers
// 409 when `version` is not the stored one.
import { Type } from '@sinclair/typebox';
import { LEAD, leadFilter, type CrmApi } from '../../../actors/crm/index.js';
import { route, type RouteDef } from '../../route.js';
import { AfterCursor } from '../../schemas.js';
import { Enum, Email, Id, ListOf, PageProps, RecordOf } from './schemas.js';
import { listRecords } from '../../../actors/records/index.js';

const TAG = 'CRM leads';

const LeadFields = {
  name: Type.String({ minLength: 1, maxLength: 200 }),
  email: Type.Optional(Email),
  phone: Type.Optional(Type.String({ minLength: 3, maxLength: 40 })),
  company: Type.Optional(Type.String({ maxLength: 200 })),
  status: Type.Optional(
    Type.String({ minLength: 1, maxLength: 64, description: 'Pipeline stage, e.g. new, contacted, qualified, won, lost (default new)' }),
  ),
  owner: Type.Optional(Type.String({ format: 'email', maxLength: 254, description: 'Staff member who owns the lead' })),
  source: Type.Optional(Type.String({ maxLength: 100 })),
  value: Type.Optional(Type.Number({ minimum: 0, description: 'Expected value, in major units' })),
  notes: Type.Optional(Type.String({ maxLength: 10_000 })),
  tags: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { maxItems: 50 })),
};

// Answers carry data free-form: a lead written through the record store may hold any shape, and
// the serializer must never fail on it.
const LeadRecord = RecordOf(Type.Object({}, { additionalProperties: true, description: 'The lead fields (see the create body)' }));

const nullable = <T extends ReturnType<typeof Type.String>>(s: T) => Type.Union([s, Type.Null()]);

/** An update: any documented field, `null` removes an optional one. */
const LeadChanges = Type.Object(
  {
    name: Type.Optional(LeadFields.name),
    email: Type.Optional(Type.Union([Email, Type.Null()])),
    phone: Type.Optional(nullable(Type.String({ minLength: 3, maxLength: 40 }))),
    company: Type.Optional(nullable(Type.String({ maxLength: 200 }))),
    status: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    owner: Type.Optional(Type.Union([Type.String({ format: 'email', maxLength: 254 }), Type.Null()])),
    source: Type.Optional(nullable(Type.String({ maxLength: 100 }))),
    value: Type.Optional(Type.Union([Type.Number({ minimum: 0 }), Type.Null()])),
    notes: Type.Optional(nullable(Type.String({ maxLength: 10_000 }))),
    tags: Type.Optional(Type.Union([LeadFields.tags, Type.Null()])),
  },
  { additionalProperties: true, minProperties: 1 },
);

const SORTS = ['createdate', 'modifydate', 'data.name', 'data.status', 'data.value'] as const;

export function leadRoutes(crm: CrmApi): RouteDef[] {
  return [
    route({
      method: 'GET',
      path: '/crm/leads/detail',
      auth: 'staff',
      tag: TAG,
      summary: 'List leads, filtered by status, owner and free text',
      description:
        'Paged, newest first by default. `q` matches name, email, company, phone, notes and source, case-insensitively. ' +
        'By `createdate`, all leads, or those of one `status`, one `owner` or both, are read by index: any page answers as fast ' +
        'as the first, with `total` exact, by `page` or by cursor (send back as `after` the `next` of the previous page); `q` ' +
        'and other sorts page by number.',
      query: Type.Object({
        status: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
        owner: Type.Optional(Type.String({ minLength: 1, maxLength: 254 })),
        q: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
        sort: Type.Optional(Enum(SORTS)),
        sortType: Type.Optional(Enum(['asc', 'desc'])),
        ...PageProps,
        ...AfterCursor,
      }),
      response: ListOf(LeadRecord),
      handler: (ctx) =>
        listRecords(ctx.deps, ctx.tenant, LEAD, leadFilter(ctx.query), {
          page: ctx.query.page,
          pageSize: ctx.query.pageSize,
          after: ctx.query.after,
          sort: ctx.query.sort ?? 'createdate',
          sortType: ctx.query.sortType ?? (ctx.query.sort ? 'asc' : 'desc'),
        }),
    }),
    route({
      method: 'POST',
      path: '/crm/leads/detail',
      auth: 'staff',
      tag: TAG,
      summary: 'Create a lead',
      description: 'Flat lead fields; `name` is required, `status` defaults to `new`. Other fields are kept as sent.',
      status: 201,
      body: Type.Object(LeadFields, { additionalProperties: true }),
      response: LeadRecord,
      handler: (ctx) => crm.createLead(ctx.tenant, ctx.body),
    }),
    route({
      method: 'GET',
      path: '/crm/leads/detail/:id',
      auth: 'staff',
      tag: TAG,
      summary: 'One lead',
      params: Type.Object({ id: Id }),
      response: LeadRecord,
      errors: [404],
      handler: (ctx) => crm.lead(ctx.tenant, ctx.params.id),
    }),
    route({
      method: 'PUT',
      path: '/crm/leads/detail/:id',
      auth: 'staff',
      tag: TAG,
      summary: 'Update a lead (version-checked)',
      description:
        'Body `{data, version}`: `data` holds the changed fields (merged; `null` removes a field), `version` the version you read. A stale version answers 409: refetch and retry.',
      params: Type.Object({ id: Id }),
      body: Type.Object({ data: LeadChanges, version: Type.Integer({ minimum: 1 }) }),
      response: LeadRecord,
      errors: [404, 409],
      handler: (ctx) => crm.updateLead(ctx.tenant, ctx.params.id, ctx.body.version, ctx.body.data),
    }),
    route({
      method: 'DELETE',
      path: '/crm/leads/detail/:id',
      auth: 'staff',
      tag: TAG,
      summary: 'Delete a lead',
      description: 'With `?version=` the delete is refused with 409 unless that is the stored version.',
      params: Type.Object({ id: Id }),
      query: Type.Object({ version: Type.Optional(Type.Integer({ minimum: 1 })) }),
      response: Type.Object({ id: Type.String(), deleted: Type.Boolean() }),
      errors: [404, 409],
      handler: async (ctx) => {
        await crm.deleteLead(ctx.tenant, ctx.params.id, ctx.query.version);
        return { id: ctx.params.id, deleted: true };
      },
    }),
  ];
}
