// `/client-data/*` (spec: Endpoints → Customer self-service and notes): a signed-in customer's own
// profile, orders and reservations. The customer token is held server-side by the caller (a
// gateway); an application token alone never acts for a customer (the edge refuses it).
import { Type } from '@sinclair/typebox';
import { ORDER, RESERVATION, type RecordsApi } from '../../../actors/records/index.js';
import type { Config } from '../../../core/config.js';
import { appError } from '../../../core/errors.js';
import { isId } from '../../../core/ids.js';
import { route, type RouteDef } from '../../route.js';
import { RecordSchema } from './schemas.js';

const TAG = 'Customer self-service';

export function clientDataRoutes(records: RecordsApi, config: Config): RouteDef[] {
  const { maxPageSize, defaultPageSize } = config.store;
  // Lists answer a plain array (spec: "empty array when the customer has none"); paging is by query.
  const ListQuery = Type.Object({
    p: Type.Optional(Type.Integer({ minimum: 1, description: 'Page, 1-based (default 1)' })),
    ps: Type.Optional(
      Type.Integer({ minimum: 1, maximum: maxPageSize, description: `Page size (default ${defaultPageSize}, at most ${maxPageSize})` }),
    ),
  });
  const ownList = (datatype: string, summary: string, description: string) =>
    route({
      method: 'GET',
      path: datatype === ORDER ? '/client-data/orders' : '/client-data/reservations',
      auth: 'customer',
      tag: TAG,
      summary,
      description,
      query: ListQuery,
      response: Type.Array(RecordSchema),
      handler: (ctx) =>
        records.ownRecords(ctx.tenant, ctx.principal!, datatype, ctx.query.p ?? 1, ctx.query.ps ?? defaultPageSize).then((r) => r.data),
    });

  return [
    route({
      method: 'GET',
      path: '/client-data/profile',
      auth: 'customer',
      tag: TAG,
      summary: "The caller's own customer profile",
      description: 'Answers the caller\'s `customer` record (credential fields are never included); 404 when the caller has none.',
      response: RecordSchema,
      errors: [404],
      handler: (ctx) => records.profile(ctx.tenant, ctx.principal!),
    }),
    ownList(ORDER, "The caller's own orders", 'Newest first; `[]` when there are none.'),
    ownList(RESERVATION, "The caller's own reservations", 'Newest first; `[]` when there are none.'),
    route({
      method: 'GET',
      path: '/client-data/reservations/:id',
      auth: 'customer',
      tag: TAG,
      summary: 'One of the caller\'s reservations',
      description: '`:id` is a 24-character hexadecimal record id (400 otherwise); another customer\'s reservation is a 404.',
      params: Type.Object({ id: Type.String({ description: '24-character hexadecimal record id' }) }),
      response: RecordSchema,
      errors: [404],
      handler: (ctx) => {
        // Ids are written in lower case; the same id in upper case is the same id.
        const id = ctx.params.id.toLowerCase();
        if (!isId(id)) throw appError('ERR_BAD_ID', 'params/id');
        return records.ownReservation(ctx.tenant, ctx.principal!, id);
      },
    }),
  ];
}
