// `/dynamic-query/*` (spec: "The dynamic-query controller is always POST"; driver-style option
// names `filter`, `limit`, `skip`). Staff only, one datatype of the caller's tenant per call.
import { Type, type TProperties } from '@sinclair/typebox';
import { appError } from '../../../core/errors.js';
import type { Filter } from '../../../core/store/query.js';
import {
  MAX_PIPELINE_STAGES,
  MAX_RESULT_DOCUMENTS,
  type DriverSort,
  type DynamicFind,
  type RecordsApi,
} from '../../../actors/records/index.js';
import type { Config } from '../../../core/config.js';
import { route, type RouteDef } from '../../route.js';
import { explained, findPlan, queryBudget } from './repository.js';
import { AnyDocument, Datatype, ListOf, SortType } from './schemas.js';

const TAG = 'Dynamic query';
const FilterSchema = Type.Object({}, { additionalProperties: true, description: 'MongoDB filter' });
const Direction = Type.Union([Type.Literal(1), Type.Literal(-1), Type.Literal('asc'), Type.Literal('desc')]);
const Sort = Type.Union([Type.String({ minLength: 1, maxLength: 200 }), Type.Record(Type.String(), Direction)], {
  description: 'A field path (with `sortType`), or `{<field-path>: 1 | -1}` naming one field',
});
const Stage = Type.Object({ stage: Type.String() }, { additionalProperties: true, description: 'A stage: `IXSCAN`, `AND_INTERSECT`, `OR` or `COLLSCAN`' });
const Explain = Type.Object({
  plan: Stage,
  sort: Type.Optional(Type.Object({ path: Type.String(), order: SortType, by: Type.String() })),
  keysExamined: Type.Integer(),
  keysCounted: Type.Integer(),
  docsExamined: Type.Integer(),
  nReturned: Type.Integer(),
  total: Type.Integer(),
  executionTimeMillis: Type.Number(),
  ranIn: Type.String({ description: '`event-loop` or `query-worker`' }),
});
const Projection = Type.Object({}, { additionalProperties: true, description: 'MongoDB projection, e.g. `{"data.name": 1}`' });

interface FilterBody {
  filter?: Filter;
  query?: Filter;
}

/** `filter` is the driver's name; `query` (the repository's) is accepted too, not both. */
function filterOf(body: FilterBody): Filter | undefined {
  if (body.filter && body.query) throw appError('ERR_VALIDATION', 'send either body/filter or body/query, not both');
  return body.filter ?? body.query;
}

function withFilter<P extends TProperties>(props: P) {
  return Type.Object(
    { datatype: Datatype, filter: Type.Optional(FilterSchema), query: Type.Optional(FilterSchema), ...props },
    { additionalProperties: false },
  );
}

export function dynamicQueryRoutes(records: RecordsApi, config: Config): RouteDef[] {
  const maxPageSize = config.store.maxPageSize;
  const QUERY_BUDGET = queryBudget(config.query);
  const FIND_PLAN = findPlan(config.query);
  const Options = Type.Object(
    {
      page: Type.Optional(Type.Integer({ minimum: 1 })),
      pageSize: Type.Optional(Type.Integer({ minimum: 1, maximum: maxPageSize })),
      sort: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
      sortType: Type.Optional(SortType),
      explain: Type.Optional(Type.Boolean({ description: 'Answer how the find runs instead of records (as /dynamic-query/explain)' })),
    },
    { additionalProperties: false, description: 'Repository-style paging, used when the driver-style fields are absent; `explain`' },
  );
  const findProps = {
    sort: Type.Optional(Sort),
    sortType: Type.Optional(SortType),
    skip: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000 })),
    projection: Type.Optional(Projection),
    options: Type.Optional(Options),
  };

  const findArgs = (body: {
    datatype: string;
    filter?: Filter;
    query?: Filter;
    sort?: DriverSort;
    sortType?: 'asc' | 'desc';
    limit?: number;
    skip?: number;
    projection?: Record<string, unknown>;
    options?: { page?: number; pageSize?: number; sort?: string; sortType?: 'asc' | 'desc'; explain?: boolean };
  }): DynamicFind => {
    const o = body.options ?? {};
    const driver = body.limit !== undefined || body.skip !== undefined;
    return {
      datatype: body.datatype,
      filter: filterOf(body),
      sort: body.sort ?? o.sort,
      sortType: body.sortType ?? o.sortType,
      limit: body.limit,
      skip: body.skip,
      page: driver ? undefined : o.page,
      pageSize: driver ? undefined : o.pageSize,
      projection: body.projection,
    };
  };

  return [
    route({
      method: 'POST',
      path: '/dynamic-query/find',
      auth: 'staff',
      tag: TAG,
      summary: 'Find records (driver-style options)',
      description:
        'Body `{datatype, filter, sort?, limit?, skip?, projection?}`; answers the list envelope. `limit` is at most ' +
        `${maxPageSize}; without \`limit\`/\`skip\`, \`options: {page, pageSize}\` pages as /repository/find does. ` +
        `${FIND_PLAN} With \`options.explain: true\` the answer is the plan instead of records (see /dynamic-query/explain). ${QUERY_BUDGET}`,
      body: withFilter({ ...findProps, limit: Type.Optional(Type.Integer({ minimum: 1, maximum: maxPageSize })) }),
      response: ListOf(AnyDocument),
      handler: (ctx) => {
        if (ctx.body.options?.explain) return explained(ctx, records.dynamicExplain(ctx.tenant, findArgs(ctx.body)));
        return records.dynamicFind(ctx.tenant, findArgs(ctx.body));
      },
    }),

    route({
      method: 'POST',
      path: '/dynamic-query/explain',
      auth: 'staff',
      tag: TAG,
      summary: 'Explain how a find runs',
      description:
        'Body as /dynamic-query/find. Runs the find and answers how, in the spirit of MongoDB\'s `explain` with ' +
        '`executionStats`, instead of its records: `{plan, sort?, keysExamined, keysCounted, docsExamined, nReturned, ' +
        'total, executionTimeMillis, ranIn}`. `plan` is the stage tree that chose the records read: `IXSCAN` (one ' +
        'index: `index: {datatype, path}`, `keys` read: `{values}` of an equality or `$in`, or `{range: {type, low, ' +
        'high}}`), `AND_INTERSECT` and `OR` (with `inputStages`), or `COLLSCAN` (every record of the datatype). ' +
        '`keysExamined` counts the index keys read, `keysCounted` those counted to choose among the indexes of an ' +
        '`$and` (each read is counted no further than 10,000 keys), `docsExamined` the records read and tested against ' +
        'the whole filter, `nReturned` the records of the page, `total` the matches. `sort.by` is `index` when one page was ' +
        'read in index order (a listing, or an index on the sorted field: see below), else `memory` (every match read and ' +
        'sorted). `ranIn` is `event-loop` or `query-worker` (see below). ' +
        `${FIND_PLAN} ${QUERY_BUDGET}`,
      body: withFilter({ ...findProps, limit: Type.Optional(Type.Integer({ minimum: 1, maximum: maxPageSize })) }),
      response: Explain,
      handler: (ctx) => records.dynamicExplain(ctx.tenant, findArgs(ctx.body)),
    }),

    route({
      method: 'POST',
      path: '/dynamic-query/findOne',
      auth: 'staff',
      tag: TAG,
      summary: 'Find the first matching record',
      description: `Body \`{datatype, filter, sort?, skip?, projection?}\`; answers \`{data: <record>}\`, or \`{data: null}\` when none matches. ${QUERY_BUDGET}`,
      body: withFilter(findProps),
      response: Type.Object({ data: Type.Union([AnyDocument, Type.Null()]) }),
      handler: async (ctx) => ({ data: await records.dynamicFindOne(ctx.tenant, findArgs(ctx.body)) }),
    }),

    route({
      method: 'POST',
      path: '/dynamic-query/count',
      auth: 'staff',
      tag: TAG,
      summary: 'Count matching records',
      description: `Body \`{datatype, filter}\`; answers \`{count}\`. ${QUERY_BUDGET}`,
      body: withFilter({}),
      response: Type.Object({ count: Type.Integer() }),
      handler: async (ctx) => ({ count: await records.count(ctx.tenant, ctx.body.datatype, filterOf(ctx.body)) }),
    }),

    route({
      method: 'POST',
      path: '/dynamic-query/distinct',
      auth: 'staff',
      tag: TAG,
      summary: 'Distinct values of a field',
      description: `Body \`{datatype, field, filter?}\`; answers \`{values}\` (array values are unwound). More than ${MAX_RESULT_DOCUMENTS} values is a 400. ${QUERY_BUDGET}`,
      body: withFilter({ field: Type.String({ pattern: '^[A-Za-z0-9_-]+(\\.[A-Za-z0-9_-]+)*$', maxLength: 200 }) }),
      response: Type.Object({ values: Type.Array(Type.Unknown()) }),
      handler: async (ctx) => ({
        values: await records.distinct(ctx.tenant, ctx.body.datatype, ctx.body.field, filterOf(ctx.body)),
      }),
    }),

    route({
      method: 'POST',
      path: '/dynamic-query/aggregate',
      auth: 'staff',
      tag: TAG,
      summary: 'Run an aggregation pipeline over one datatype',
      description:
        'Body `{datatype, pipeline}` (MongoDB stages, run by mingo); answers `{data}`. Only stages that reshape the ' +
        "datatype's own records are allowed: `$lookup`, `$graphLookup`, `$unionWith`, `$out`, `$merge` and code " +
        `(\`$function\`, \`$accumulator\`, \`$where\`) are refused with 400. At most ${MAX_PIPELINE_STAGES} stages ` +
        `(counting those inside \`$facet\`) and ${MAX_RESULT_DOCUMENTS} result documents; any one stage passes on at most ` +
        `1,000,000 documents (\`QUERY_MAX_STAGE_DOCUMENTS\`). ${QUERY_BUDGET}`,
      body: Type.Object(
        {
          datatype: Datatype,
          pipeline: Type.Array(Type.Object({}, { additionalProperties: true }), { maxItems: MAX_PIPELINE_STAGES }),
        },
        { additionalProperties: false },
      ),
      response: Type.Object({ data: Type.Array(AnyDocument) }),
      handler: async (ctx) => ({ data: await records.aggregate(ctx.tenant, ctx.body.datatype, ctx.body.pipeline) }),
    }),
  ];
}
