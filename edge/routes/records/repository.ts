// `/repository/*` (spec: Endpoints → Repository; Resources → Request bodies; Versioning): generic
// record CRUD and queries, staff only. Writes go through the tenant's records actor; a get by id
// reads the store; a small simple find runs in place, others in the query pool's workers under
// the query budget.
import { Type } from '@sinclair/typebox';
import { assertPathDepth } from '../../../core/document-limits.js';
import { appError } from '../../../core/errors.js';
import { assertIdempotencyKey, fingerprint } from '../../../core/idempotency.js';
import { attributeFilter, type RecordsApi } from '../../../actors/records/index.js';
import type { Config } from '../../../core/config.js';
import { route, type RequestContext, type RouteDef } from '../../route.js';
import { AfterCursor, DatatypeParams, Datatype, pageQuery, RecordList, RecordParams, RecordSchema, SortType } from './schemas.js';
import { repositoryIndexRoutes } from './indexes.js';
import { envelopeText, listAnswer, recordAnswer } from './record-envelopes.js';

const TAG = 'Repository';
/** What every client query route says of its budget, with this node's figures (README: Limits). */
export function queryBudget(q: Config['query']): string {
  const n = (x: number) => x.toLocaleString('en-US');
  return (
    `Queries run in worker threads under a budget: at most ${n(q.timeoutMs)} ms (\`QUERY_TIMEOUT_MS\`) and ` +
    `${n(q.workerHeapMb)} MiB of heap (\`QUERY_WORKER_HEAP_MB\`) each; over it the query is stopped and answers 400 ` +
    'naming the limit (narrow the filter, filter on an indexed field, or add `$limit`). Only allowed operators are ' +
    'accepted (others are a 400 naming them: no `$where`, `$function`, `$accumulator`, `$lookup`); `$range` yields at ' +
    `most ${n(q.maxRange)} elements, any operator's array ${n(q.maxArray)} and string ${n(q.maxString)} characters; ` +
    `regexes run on RE2 (linear time: no backreferences or lookarounds; at most ${n(q.maxRegexLength)} characters). ` +
    `An organisation's queries queue while its share of the workers is busy (at most ${n(q.tenantQueueMax)} waiting, ` +
    `${n(q.queueMax)} in all; beyond that 503 with \`Retry-After\`).`
  );
}
/** What every find route says of its plan (core/store/find-plan.ts, actors/records/reads.ts). */
export function findPlan(q: Config['query']): string {
  return (
    'An equality, `$in` or range (`$gt`, `$gte`, `$lt`, `$lte`) on an indexed field (a built-in index, or one the ' +
    'organisation declared and that finished building: `POST /repository/indexes`) narrows the records read wherever it ' +
    'stands: at the top, inside `$and` (the most selective index, or the intersection of several), inside `$or` (the ' +
    'union of each branch\'s index reads; one branch without an indexed condition makes the find read every record of the ' +
    'datatype). Ranges compare within one type, as MongoDB does (`{$gt: 5}` matches numbers only). A find of simple ' +
    'operators (equality, `$in`, ranges, `$exists`, `$and`/`$or` of those) that an index narrows to at most ' +
    `${q.inPlaceMaxCandidates.toLocaleString('en-US')} records (\`QUERY_IN_PLACE_MAX_CANDIDATES\`) answers at once; any ` +
    'other runs in a query worker. A find that a listing a module keeps answers exactly (equalities on its fields, sorted ' +
    'by its sort: an event\'s tickets by `createdate`, leads, tasks, a thread\'s messages) reads one page by index at any ' +
    'size, at once, with `total` exact, and answers `next`, a cursor to send back as `after` for the page after it; with ' +
    'more conditions beside, such a listing of at most 1,000 records is read whole and each record tested. A find sorted ' +
    'on an indexed field that never held an array, with no filter or one condition on that field (an equality, or a range ' +
    'of numbers or of strings), reads one page in index order too, at any size, `total` counted on index keys, with `next`; ' +
    'without a filter that needs every record to hold a number or string there (none missing, no boolean), and a range of ' +
    'strings some string that is not a number, else it reads every match and sorts them. `after` on any other find is a 400.'
  );
}

/**
 * Answers an explain as it is: the find routes declare the list envelope as their answer, which a
 * plan is not, so it goes out as JSON text of its own (the compiled serializer would drop it).
 */
export async function explained(ctx: RequestContext, explain: Promise<unknown>): Promise<string> {
  const body = JSON.stringify(await explain);
  ctx.type = 'application/json';
  return body;
}

/** Every write route says it: the datatypes that govern sign-in are written by Admins only. */
const ADMIN_WRITES =
  'Records of `setting` (the `base-setting` document turns PIN and card sign-in on for the whole organisation) ' +
  'are written by role Admin only, as the settings routes are: 403 for other staff; reading them is unchanged.';
const DataObject = Type.Object({}, { additionalProperties: true, description: 'Business fields (`data.<field>`)' });

/** The verified caller's roles: the records actor decides from them who may write what. */
function rolesOf(ctx: RequestContext): readonly string[] {
  return ctx.principal?.roles ?? [];
}

export function repositoryRoutes(records: RecordsApi, config: Config): RouteDef[] {
  const maxPageSize = config.store.maxPageSize;
  const PageQuery = pageQuery(maxPageSize);
  const QUERY_BUDGET = queryBudget(config.query);
  const FIND_PLAN = findPlan(config.query);

  return [
    ...repositoryIndexRoutes(records, config),
    route({
      method: 'POST',
      path: '/repository/create',
      auth: 'staff',
      tag: TAG,
      summary: 'Create a record',
      description:
        'Body `{datatype, data, isNew: true, version: 0}`; answers 201 with the record at version 1 (`state` `new` unless ' +
        'given). With `idempotencyKey` (a UUID) every retry within 24 hours answers the first result (header ' +
        '`idempotent-replayed: true`) without creating again; the same key with another body is a 409. The account ' +
        'datatypes (`user`, `customer`, `apikey`, `user_security`, `two_factor_backup`) are refused (403). ' +
        ADMIN_WRITES,
      status: 201,
      body: Type.Object(
        {
          datatype: Datatype,
          data: DataObject,
          isNew: Type.Literal(true, { description: 'Must be `true`' }),
          version: Type.Optional(Type.Literal(0, { description: 'Must be 0 when sent' })),
          state: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
          idempotencyKey: Type.Optional(Type.String({ description: 'UUID; see the description' })),
        },
        { additionalProperties: false },
      ),
      response: RecordSchema,
      errors: [403, 409],
      handler: async (ctx) => {
        const { datatype, data, state, idempotencyKey } = ctx.body;
        assertIdempotencyKey(idempotencyKey);
        const idempotency = idempotencyKey
          ? { key: idempotencyKey, print: fingerprint('repository.create', { datatype, data, state }) }
          : undefined;
        const reply = await records.create(ctx.tenant, rolesOf(ctx), { datatype, data, state, idempotency });
        ctx.status = reply.status;
        if (reply.replayed) ctx.responseHeaders['idempotent-replayed'] = 'true';
        return reply.body;
      },
    }),

    route({
      method: 'POST',
      path: '/repository/update/:datatype/:id',
      auth: 'staff',
      tag: TAG,
      summary: 'Update a record',
      description:
        'Body `{data, version}`: each top-level field of `data` replaces the stored one (a shallow merge; other fields ' +
        'are kept); `version` is the version read, and a stale one is a 409 (refetch and retry). Answers the record. ' +
        ADMIN_WRITES,
      params: RecordParams,
      body: Type.Object(
        {
          data: DataObject,
          version: Type.Integer({ minimum: 1, description: 'The version read' }),
          state: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
        },
        { additionalProperties: false },
      ),
      response: RecordSchema,
      errors: [403, 404, 409],
      handler: (ctx) =>
        records.update(ctx.tenant, rolesOf(ctx), {
          datatype: ctx.params.datatype,
          sk: ctx.params.id,
          data: ctx.body.data,
          version: ctx.body.version,
          state: ctx.body.state,
        }),
    }),

    route({
      method: 'POST',
      path: '/repository/update-partial/:datatype/:id',
      auth: 'staff',
      tag: TAG,
      summary: 'Set fields of a record by path',
      description:
        'A flat key map applied verbatim as a set. Keys are full paths from the record root: `data.productItems` sets ' +
        'inside `data`, while `productItems` lands at the record root. A `version` key is not set: it is checked ' +
        'against the stored version (409 when stale). Answers `true`. Refused (403) on `user`, `customer`, `apikey`, ' +
        '`user_security` and `two_factor_backup`. Each segment of a dotted key counts as a nesting level: a key and its ' +
        'value may reach at most `JSON_MAX_DEPTH` levels from the record root (400 past it), and the resulting record ' +
        'is held to the document limits, as every stored record is, before it is written. ' +
        ADMIN_WRITES,
      params: RecordParams,
      body: Type.Record(Type.String(), Type.Unknown(), { description: 'Field path → value' }),
      response: Type.Boolean(),
      errors: [403, 404, 409],
      handler: (ctx) => {
        const { version, ...set } = ctx.body as Record<string, unknown>;
        if (version !== undefined && !(Number.isInteger(version) && (version as number) >= 1)) {
          throw appError('ERR_VALIDATION', 'body/version must be an integer of at least 1');
        }
        for (const key in set) assertPathDepth(key, set[key], config.documents);
        return records.updatePartial(ctx.tenant, rolesOf(ctx), {
          datatype: ctx.params.datatype,
          sk: ctx.params.id,
          set,
          version: version as number | undefined,
        });
      },
    }),

    route({
      method: 'DELETE',
      path: '/repository/delete/:datatype/:id',
      auth: 'staff',
      tag: TAG,
      summary: 'Delete a record',
      description:
        'With `?version=n` the delete happens only at that version (409 otherwise). Refused (403) on `user` and ' +
        '`customer`, and on the other account datatypes. ' +
        ADMIN_WRITES,
      params: RecordParams,
      query: Type.Object({ version: Type.Optional(Type.Integer({ minimum: 1 })) }),
      response: Type.Object({ deleted: Type.Boolean(), datatype: Type.String(), sk: Type.String() }),
      errors: [403, 404, 409],
      handler: (ctx) => records.remove(ctx.tenant, rolesOf(ctx), { datatype: ctx.params.datatype, sk: ctx.params.id, version: ctx.query.version }),
    }),

    route({
      method: 'GET',
      path: '/repository/get/:datatype/:id',
      auth: 'staff',
      tag: TAG,
      summary: 'Read a record',
      params: RecordParams,
      response: RecordSchema,
      errors: [404],
      handler: (ctx) => {
        const text = records.getText(ctx.tenant, ctx.params.datatype, ctx.params.id, envelopeText);
        return typeof text === 'string' ? recordAnswer(ctx, text) : text.then((t) => recordAnswer(ctx, t));
      },
    }),

    route({
      method: 'POST',
      path: '/repository/find/:datatype',
      auth: 'staff',
      tag: TAG,
      summary: 'Query records',
      description:
        'Body `{query: {<field-path>: <value>}, options: {page, pageSize, sort, sortType}}`; `query` is a MongoDB ' +
        'filter. Values compare as stored (a numeric string matches the same string, not a number); a sort is ' +
        'numeric when every value of the field is a number or a numeric string. No match is an empty list. ' +
        `${FIND_PLAN} With \`options.explain: true\` the answer is the plan instead of records (see /dynamic-query/explain). ` +
        QUERY_BUDGET,
      params: DatatypeParams,
      body: Type.Object(
        {
          query: Type.Optional(Type.Object({}, { additionalProperties: true, description: 'MongoDB filter' })),
          options: Type.Optional(
            Type.Object(
              {
                page: Type.Optional(Type.Integer({ minimum: 1 })),
                pageSize: Type.Optional(Type.Integer({ minimum: 1, maximum: maxPageSize })),
                sort: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
                sortType: Type.Optional(SortType),
                ...AfterCursor,
                explain: Type.Optional(Type.Boolean({ description: 'Answer how the find runs (its plan, keys and records examined) instead of records' })),
              },
              { additionalProperties: false },
            ),
          ),
        },
        { additionalProperties: false },
      ),
      response: RecordList,
      handler: (ctx) => {
        const { explain, ...options } = ctx.body.options ?? {};
        const req = { filter: ctx.body.query, ...options };
        if (explain) return explained(ctx, records.explain(ctx.tenant, ctx.params.datatype, req));
        return records.find(ctx.tenant, ctx.params.datatype, req, envelopeText).then((res) => listAnswer(ctx, res));
      },
    }),

    route({
      method: 'GET',
      path: '/repository/find-page-data/:datatype',
      auth: 'staff',
      tag: TAG,
      summary: 'Read one page of a datatype',
      description:
        'Query `p` (page), `ps` (page size), `s` (sort field, e.g. `data.price`), `st` (`asc` or `desc`). Runs under the ' +
        'query time and memory budget of /repository/find. Sorted on a field with an index (a built-in one, or one the ' +
        'organisation declared: `POST /repository/indexes`) where every record holds a number or a string, one page is read ' +
        'in index order at any size, with `next` to send back as `after`. Without a filter, `total` is read from counts kept in ' +
        'every write (once the index is built), not counted per page; a page number skips index keys natively to its place.',
      params: DatatypeParams,
      query: PageQuery,
      response: RecordList,
      handler: (ctx) =>
        records.find(ctx.tenant, ctx.params.datatype, {
          page: ctx.query.p,
          pageSize: ctx.query.ps,
          sort: ctx.query.s,
          sortType: ctx.query.st,
          after: ctx.query.after,
        }),
    }),

    route({
      method: 'GET',
      path: '/repository/find-by-attribute/:datatype/:attribute/:value',
      auth: 'staff',
      tag: TAG,
      summary: 'Find records by one field',
      description:
        'An attribute without a `data.` prefix is looked up inside `data` (`name` means `data.name`). The value is ' +
        'text; a numeric text also matches the same number stored as a number. Paged like find-page-data.',
      params: Type.Object({
        datatype: Datatype,
        attribute: Type.String({ pattern: '^[A-Za-z0-9_-]+(\\.[A-Za-z0-9_-]+)*$', maxLength: 200 }),
        value: Type.String({ maxLength: 1000 }),
      }),
      query: PageQuery,
      response: RecordList,
      handler: (ctx) =>
        records.find(ctx.tenant, ctx.params.datatype, {
          filter: attributeFilter(ctx.params.attribute, ctx.params.value),
          page: ctx.query.p,
          pageSize: ctx.query.ps,
          sort: ctx.query.s,
          sortType: ctx.query.st,
          after: ctx.query.after,
        }),
    }),
  ];
}
