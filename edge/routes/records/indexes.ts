// `/repository/indexes`: indexes an organisation declares on its own datatypes (issue 33), built in
// the background and used by its finds once built (core/store/tenant-indexes.ts).
import { Type } from '@sinclair/typebox';
import type { RecordsApi } from '../../../actors/records/index.js';
import type { Config } from '../../../core/config.js';
import { MAX_INDEX_PATH_LENGTH, MAX_INDEX_PATH_SEGMENTS } from '../../../core/store/tenant-indexes.js';
import { route, type RouteDef } from '../../route.js';
import { Datatype } from './schemas.js';

const TAG = 'Repository';

const IndexSchema = Type.Object({
  id: Type.String(),
  datatype: Type.String(),
  path: Type.String(),
  unique: Type.Boolean(),
  state: Type.String({ enum: ['building', 'ready', 'failed'] }),
  progress: Type.Object({ done: Type.Integer(), total: Type.Integer() }),
  createdAt: Type.String(),
  readyAt: Type.Optional(Type.String()),
  reason: Type.Optional(Type.String({ description: 'Why the build failed' })),
});

const BuiltInSchema = Type.Object({
  id: Type.String(),
  datatype: Type.String(),
  path: Type.String(),
  builtIn: Type.Literal(true),
  state: Type.Literal('ready'),
});

const IndexParams = Type.Object({ id: Type.String({ pattern: '^[A-Za-z0-9_:.-]{1,300}$' }) });

export function repositoryIndexRoutes(records: RecordsApi, config: Config): RouteDef[] {
  const max = config.store.maxTenantIndexes;
  const step = config.store.indexBuildStep.toLocaleString('en-US');
  return [
    route({
      method: 'POST',
      path: '/repository/indexes',
      auth: 'staff',
      roles: ['Admin'],
      tag: TAG,
      summary: 'Declare an index on a field of a datatype',
      description:
        'Body `{datatype, path, unique?}`: `path` is a business field, `data.<field>` (dotted for nested fields, letters, ' +
        `digits, \`_\` and \`-\`, at most ${MAX_INDEX_PATH_SEGMENTS} segments and ${MAX_INDEX_PATH_LENGTH} characters). ` +
        'A path through an array of objects (`data.items.sku`) indexes every element\'s value, as a filter matches any ' +
        'element; a numeric segment (an array position) is refused with 400. Answers 202 with the index in state ' +
        `\`building\`: it is built in the background in steps of at most ${step} records (\`STORE_INDEX_BUILD_STEP\`) or 2 ms, while ` +
        'writes go on (every write from the declaration on is indexed); `progress` says how far it is (GET). Once ' +
        '`ready`, finds of this organisation use it as they use the built-in indexes (`/dynamic-query/explain` shows ' +
        'it); another organisation never sees or uses it. A build interrupted by a restart resumes. The index\'s ' +
        'entries count in the organisation\'s stored bytes. `unique: true` refuses (409) a write that would give a ' +
        'second record a value the index holds (records without the field, or with null, are not held to it); over ' +
        'data that already holds duplicates the build ends `failed` with a `reason`. At most ' +
        `${max} indexes per organisation (\`STORE_MAX_TENANT_INDEXES\`): 409 beyond, as for a path indexed already ` +
        '(by a built-in index or one of yours). On a cluster (`NATS_URL`) the declaration travels with the ' +
        "organisation's writes: the node serving it builds the index, and so does a node that takes the organisation over. " +
        'Account datatypes cannot be indexed (403). Role Admin.',
      status: 202,
      body: Type.Object(
        {
          datatype: Datatype,
          path: Type.String({ minLength: 1, maxLength: MAX_INDEX_PATH_LENGTH }),
          unique: Type.Optional(Type.Boolean()),
        },
        { additionalProperties: false },
      ),
      response: IndexSchema,
      errors: [400, 403, 409],
      handler: (ctx) => records.declareIndex(ctx.tenant, ctx.body, max),
    }),
    route({
      method: 'GET',
      path: '/repository/indexes',
      auth: 'staff',
      tag: TAG,
      summary: "The organisation's indexes",
      description:
        '`declared`: the indexes this organisation declared, with their state and build progress. `builtIn`: the ' +
        'indexes the platform keeps on its own datatypes, which apply to every organisation (read-only: they cannot be ' +
        'deleted).',
      response: Type.Object({ declared: Type.Array(IndexSchema), builtIn: Type.Array(BuiltInSchema) }),
      handler: (ctx) => records.indexes(ctx.tenant),
    }),
    route({
      method: 'GET',
      path: '/repository/indexes/:id',
      auth: 'staff',
      tag: TAG,
      summary: 'One declared index, with its build progress',
      params: IndexParams,
      response: IndexSchema,
      errors: [404],
      handler: (ctx) => records.index(ctx.tenant, ctx.params.id),
    }),
    route({
      method: 'DELETE',
      path: '/repository/indexes/:id',
      auth: 'staff',
      roles: ['Admin'],
      tag: TAG,
      summary: 'Delete a declared index',
      description:
        'From this request on no find uses it and no write keeps it (a unique index stops refusing); its entries are ' +
        'removed in the background. A built-in index (`builtin:` id) answers 403; another organisation\'s id, 404. Role Admin.',
      params: IndexParams,
      response: Type.Object({ deleted: Type.Boolean(), id: Type.String() }),
      errors: [403, 404],
      handler: async (ctx) => {
        await records.dropIndex(ctx.tenant, ctx.params.id);
        return { deleted: true, id: ctx.params.id };
      },
    }),
  ];
}
