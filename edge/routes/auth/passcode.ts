// Passcodes (PINs) and access cards (spec: Endpoints → Passcodes and access cards). The sign-in
// route itself is in signin.ts. A PIN is 4 to 8 digits, stored as a scrypt hash.
import { Type } from '@sinclair/typebox';
import { CARD, USER, publicCard, type CardData, type AuthApi } from '../../../actors/auth/index.js';
import type { Principal } from '../../../core/auth/tokens.js';
import { appError } from '../../../core/errors.js';
import type { Filter } from '../../../core/store/query.js';
import { route, type RouteDef } from '../../route.js';
import {
  Body,
  CardSchema,
  CardUidSchema,
  EmployeeIdSchema,
  Id,
  PageQuery,
  TAG_PASSCODE,
  caller,
  listOf,
} from './common.js';
import { listRecords } from '../../../actors/records/index.js';

const EmployeeSchema = Type.Object({
  id: Type.String(),
  name: Type.Optional(Type.String()),
  email: Type.Optional(Type.String()),
  employeeId: Type.Union([Type.String(), Type.Null()]),
  roles: Type.Array(Type.String()),
  status: Type.String(),
  hasPasscode: Type.Boolean(),
});

export function passcodeRoutes(svc: AuthApi): RouteDef[] {
  const cardList = async (tenant: string, p: Principal, filter: Filter, q: { page?: number; pageSize?: number }) => {
    const r = await listRecords(svc.deps, tenant, CARD, filter, { page: q.page, pageSize: q.pageSize, sort: 'createdate', sortType: 'asc' });
    return { ...r, data: r.data.map((c) => svc.pins.cardView(tenant, p, c)) };
  };
  return [
    route({
      method: 'POST',
      path: '/profile/passcode/set',
      auth: 'staff',
      tag: TAG_PASSCODE,
      summary: 'Set your PIN (or, as Admin, another user\'s)',
      description:
        "pin is 4 to 8 digits. employeeId is needed when the user has none yet (unique in the organisation, 409 otherwise); it may also change it. An Admin may set another user's PIN only when holding every role that user holds, and never the primary contact's (403): whoever sets a PIN can sign in with it.",
      body: Body({ pin: Type.String({ pattern: '^[0-9]{4,8}$' }), employeeId: Type.Optional(EmployeeIdSchema), userId: Type.Optional(Id) }),
      response: Type.Object({ userId: Type.String(), employeeId: Type.String(), hasPasscode: Type.Boolean() }),
      errors: [403, 404, 409],
      handler: (ctx) => svc.pins.set(ctx.tenant, caller(ctx), ctx.body),
    }),
    route({
      method: 'POST',
      path: '/profile/passcode/remove',
      auth: 'staff',
      tag: TAG_PASSCODE,
      summary: 'Remove your PIN (or, as Admin, another user\'s)',
      body: Body({ userId: Type.Optional(Id) }),
      response: Type.Object({ userId: Type.String(), hasPasscode: Type.Boolean(), removed: Type.Boolean() }),
      errors: [403, 404],
      handler: (ctx) => svc.pins.remove(ctx.tenant, caller(ctx), ctx.body.userId),
    }),
    route({
      method: 'POST',
      path: '/profile/passcode/card/register',
      auth: 'staff',
      tag: TAG_PASSCODE,
      summary: 'Register an access card for an employee',
      description:
        "For your own employee id, or, with role Admin, for a user holding no role you do not hold and who is not the primary contact (403 otherwise: a registered card signs in as its holder). A card UID is registered once per organisation (409).",
      status: 201,
      body: Body({ employeeId: EmployeeIdSchema, cardUid: CardUidSchema, label: Type.Optional(Type.String({ maxLength: 80 })) }),
      response: CardSchema,
      errors: [403, 404, 409],
      handler: async (ctx) => publicCard(await svc.passcodes.registerCard(ctx.tenant, caller(ctx), ctx.body)),
    }),
    route({
      method: 'POST',
      path: '/profile/passcode/card/status',
      auth: 'staff',
      tag: TAG_PASSCODE,
      summary: 'Change a card\'s status (active, revoked, lost)',
      description: 'revoked and lost: your own card, or any with role Admin. Re-activating (active) needs Admin. Revoked and lost cards cannot sign in.',
      body: Body({ cardUid: CardUidSchema, status: Type.String({ enum: ['active', 'revoked', 'lost'] }) }),
      response: CardSchema,
      errors: [403, 404],
      handler: async (ctx) => publicCard(await svc.passcodes.setCardStatus(ctx.tenant, caller(ctx), ctx.body.cardUid, ctx.body.status as CardData['status'])),
    }),
    route({
      method: 'GET',
      path: '/profile/passcode/cards',
      auth: 'staff',
      tag: TAG_PASSCODE,
      summary: "The organisation's access cards",
      description: "cardUid is shown in full to the card's holder and to Admins who hold every role the holder holds (never the primary contact's, except to them); others see its last 4 characters (…1234), since a card UID signs in.",
      query: Type.Object({ status: Type.Optional(Type.String({ enum: ['active', 'revoked', 'lost'] })), ...PageQuery }),
      response: listOf(CardSchema),
      handler: (ctx) => cardList(ctx.tenant, caller(ctx), ctx.query.status ? { 'data.status': ctx.query.status } : {}, ctx.query),
    }),
    route({
      method: 'GET',
      path: '/profile/passcode/cards/:employeeId',
      auth: 'staff',
      tag: TAG_PASSCODE,
      summary: "One employee's access cards",
      params: Type.Object({ employeeId: EmployeeIdSchema }),
      query: Type.Object(PageQuery),
      response: listOf(CardSchema),
      handler: (ctx) => cardList(ctx.tenant, caller(ctx), { 'data.employeeId': ctx.params.employeeId }, ctx.query),
    }),
    route({
      method: 'GET',
      path: '/profile/passcode/card/:identifier',
      auth: 'staff',
      tag: TAG_PASSCODE,
      summary: 'One access card, by card UID or card id',
      params: Type.Object({ identifier: CardUidSchema }),
      response: CardSchema,
      errors: [404],
      handler: (ctx) => {
        const id = ctx.params.identifier;
        const rec = svc.accounts.card(ctx.tenant, id);
        if (!rec) throw appError('ERR_NOT_FOUND', `card ${id}`);
        return svc.pins.cardView(ctx.tenant, caller(ctx), rec);
      },
    }),
    route({
      method: 'GET',
      path: '/business-made/employees',
      auth: 'staff',
      tag: TAG_PASSCODE,
      summary: 'Staff users with their employee ids',
      description: 'Sorted by name; applications (System group) are not listed. hasPasscode tells whether a PIN is set.',
      query: Type.Object({ withEmployeeId: Type.Optional(Type.Boolean({ description: 'Only those with an employee id' })), ...PageQuery }),
      response: listOf(EmployeeSchema),
      handler: async (ctx) => {
        const filter: Filter = { 'data.group': { $ne: 'System' } };
        if (ctx.query.withEmployeeId) filter['data.employeeId'] = { $exists: true };
        const r = await listRecords(ctx.deps, ctx.tenant, USER, filter, { page: ctx.query.page, pageSize: ctx.query.pageSize, sort: 'data.name' });
        return { ...r, data: svc.staff.employees(ctx.tenant, r.data) };
      },
    }),
  ];
}
