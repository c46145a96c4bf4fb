// Application identities and API keys (spec: Authentication → Tokens and refresh 3, Headers,
// Combinations). Secrets and keys are answered once, at creation, and stored as SHA-256 digests.
import { Type } from '@sinclair/typebox';
import { APIKEY, publicApiKey, publicApp, type AuthApi } from '../../../actors/auth/index.js';
import { pageItems } from '../../../core/store/query.js';
import { route, type RouteDef } from '../../route.js';
import {
  Body,
  Id,
  PageQuery,
  TAG_APPS,
  caller,
  clientInfo,
  listOf,
} from './common.js';
import { listRecords } from '../../../actors/records/index.js';

const AppSchema = Type.Object({
  appId: Type.String(),
  name: Type.String(),
  status: Type.String(),
  domains: Type.Array(Type.String()),
  createdate: Type.String(),
});

const ApiKeySchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  prefix: Type.String({ description: 'First characters of the key, to recognise it' }),
  roles: Type.Array(Type.String()),
  ownerId: Type.String(),
  createdate: Type.String(),
  expiresAt: Type.Optional(Type.String()),
});

const Domain = Type.String({ minLength: 1, maxLength: 253, pattern: '^[A-Za-z0-9.-]+(:[0-9]{1,5})?$' });

export function appRoutes(svc: AuthApi): RouteDef[] {
  return [
    route({
      method: 'POST',
      path: '/profile/app/register',
      auth: 'staff',
      roles: ['ConfigAdmin'],
      tag: TAG_APPS,
      summary: 'Register an application identity',
      description:
        'Creates a user in the System group and answers {appId, secret}: the secret is shown this once and stored hashed. With domains, a key exchange must name one of them.',
      status: 201,
      body: Body({ name: Type.String({ minLength: 1, maxLength: 120 }), domains: Type.Optional(Type.Array(Domain, { maxItems: 20 })) }),
      response: Type.Object({ appId: Type.String(), secret: Type.String(), name: Type.String(), domains: Type.Array(Type.String()), createdate: Type.String() }),
      handler: async (ctx) => {
        const { app, secret } = await svc.apps.register(ctx.tenant, caller(ctx).sub, ctx.body.name.trim(), ctx.body.domains ?? []);
        return { ...publicApp(app), secret };
      },
    }),
    route({
      method: 'POST',
      path: '/profile/app/key',
      auth: 'none',
      tag: TAG_APPS,
      summary: 'Exchange an application id and secret for an application token',
      description:
        'Answers {token} of kind app, for Authorization. A legacy `key` field is ignored. A revoked application is refused (401); tokens issued before the revocation run until they expire. An application token alone never acts for a customer: send the customer token in x-client-authorization.',
      body: Type.Object(
        { appId: Type.String({ minLength: 1, maxLength: 64 }), secret: Type.String({ minLength: 1, maxLength: 256 }), domain: Type.Optional(Type.String({ maxLength: 253 })) },
        { additionalProperties: true },
      ),
      response: Type.Object({ token: Type.String(), tokenType: Type.String(), expiresIn: Type.Integer(), appId: Type.String() }),
      errors: [401, 429],
      handler: (ctx) => svc.apps.exchange(ctx.tenant, ctx.body.appId, ctx.body.secret, ctx.body.domain, clientInfo(ctx)),
    }),
    route({
      method: 'GET',
      path: '/profile/apps',
      auth: 'staff',
      roles: ['ConfigAdmin'],
      tag: TAG_APPS,
      summary: "The organisation's applications",
      query: Type.Object(PageQuery),
      response: listOf(AppSchema),
      handler: (ctx) => {
        return pageItems(svc.apps.list(ctx.tenant), ctx.query.page, ctx.query.pageSize, ctx.deps.config.store);
      },
    }),
    route({
      method: 'POST',
      path: '/profile/app/revoke',
      auth: 'staff',
      roles: ['ConfigAdmin'],
      tag: TAG_APPS,
      summary: 'Revoke an application: new key exchanges are refused, tokens already issued stop',
      description: 'Application tokens issued before the revocation are refused from the next request on, on every node.',
      body: Body({ appId: Id }),
      response: AppSchema,
      errors: [404],
      handler: async (ctx) => publicApp(await svc.revokeApp(ctx.tenant, ctx.body.appId, caller(ctx).sub)),
    }),
    route({
      method: 'POST',
      path: '/profile/api-keys',
      auth: 'staff',
      roles: ['Admin'],
      tag: TAG_APPS,
      summary: 'Create an API key',
      description:
        'Answers {id, key}: the key is shown this once and stored hashed. Send it as x-api-key with orgid; it acts as you, with the given roles (default: yours; never more than yours; User always). A deleted key is refused at once.',
      status: 201,
      body: Body({
        name: Type.String({ minLength: 1, maxLength: 120 }),
        roles: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 40 }), { maxItems: 20 })),
        expiresAt: Type.Optional(Type.String({ format: 'date-time' })),
      }),
      response: Type.Object({ ...ApiKeySchema.properties, key: Type.String() }),
      errors: [403],
      handler: async (ctx) => {
        const { rec, key } = await svc.apiKeys.create(ctx.tenant, caller(ctx), ctx.body);
        return { ...publicApiKey(rec), key };
      },
    }),
    route({
      method: 'GET',
      path: '/profile/api-keys',
      auth: 'staff',
      roles: ['Admin'],
      tag: TAG_APPS,
      summary: "The organisation's API keys (never the keys themselves)",
      query: Type.Object(PageQuery),
      response: listOf(ApiKeySchema),
      handler: async (ctx) => {
        const r = await listRecords(ctx.deps, ctx.tenant, APIKEY, {}, { page: ctx.query.page, pageSize: ctx.query.pageSize, sort: 'createdate' });
        return { ...r, data: r.data.map(publicApiKey) };
      },
    }),
    route({
      method: 'DELETE',
      path: '/profile/api-keys/:id',
      auth: 'staff',
      roles: ['Admin'],
      tag: TAG_APPS,
      summary: 'Delete an API key (refused from the next request on)',
      params: Type.Object({ id: Id }),
      response: Type.Object({ deleted: Type.Boolean(), id: Type.String() }),
      errors: [404],
      handler: async (ctx) => {
        await svc.deleteApiKey(ctx.tenant, ctx.params.id);
        return { deleted: true, id: ctx.params.id };
      },
    }),
  ];
}
