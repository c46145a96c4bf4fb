// `/dynamic-query/*` (spec: "The dynamic-query controller is always POST"; driver-style option
// names `filter`, `limit`, `skip`). Staff only, one datatype of the caller's tenant per call.
import { Type, type TProperties } from '@sinclair/typebox';
import { appError } from '../../../core/errors.js';
import type { Filter } from '../../../core/store/query.js';
import {
  dynamicAggregate,
  dynamicCount,
  dynamicDistinct,
  dynamicFind,
  dynamicFindOne,
  MAX_PIPELINE_STAGES,
  MAX_RESULT_DOCUMENTS,
  type DriverSort,
  type DynamicFind,
} from '../../../actors/records/dynamic-query.js';
import type { AppDeps } from '../../deps.js';
import { route, type RouteDef } from '../../route.js';
import { queryBudget } from './repository.js';
import { AnyDocument, Datatype, ListOf, SortType } from './schemas.js';

const TAG = 'Dynamic query';
const FilterSchema = Type.Object({}, { additionalProperties: true, description: 'MongoDB filter' });
const Direction = Type.Union([Type.Literal(1), Type.Literal(-1), Type.Literal('asc'), Type.Literal('desc')]);
const Sort = Type.Union([Type.String({ minLength: 1, maxLength: 200 }), Type.Record(Type.String(), Direction)], {
  description: 'A field path (with `sortType`), or `{<field-path>: 1 | -1}` naming one field',
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

export function dynamicQueryRoutes(deps: AppDeps): RouteDef[] {
  const maxPageSize = deps.config.store.maxPageSize;
  const QUERY_BUDGET = queryBudget(deps.config.query);
  const Options = Type.Object(
    {
      page: Type.Optional(Type.Integer({ minimum: 1 })),
      pageSize: Type.Optional(Type.Integer({ minimum: 1, maximum: maxPageSize })),
      sort: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
      sortType: Type.Optional(SortType),
    },
    { additionalProperties: false, description: 'Repository-style paging, used when the driver-style fields are absent' },
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
    options?: { page?: number; pageSize?: number; sort?: string; sortType?: 'asc' | 'desc' };
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
        `${maxPageSize}; without \`limit\`/\`skip\`, \`options: {page, pageSize}\` pages as /repository/find does. ${QUERY_BUDGET}`,
      body: withFilter({ ...findProps, limit: Type.Optional(Type.Integer({ minimum: 1, maximum: maxPageSize })) }),
      response: ListOf(AnyDocument),
      handler: (ctx) => dynamicFind(ctx.deps, ctx.tenant, findArgs(ctx.body)),
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
      handler: async (ctx) => ({ data: await dynamicFindOne(ctx.deps, ctx.tenant, findArgs(ctx.body)) }),
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
      handler: async (ctx) => ({ count: await dynamicCount(ctx.deps, ctx.tenant, ctx.body.datatype, filterOf(ctx.body)) }),
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
        values: await dynamicDistinct(ctx.deps, ctx.tenant, ctx.body.datatype, ctx.body.field, filterOf(ctx.body)),
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
      handler: async (ctx) => ({ data: await dynamicAggregate(ctx.deps, ctx.tenant, ctx.body.datatype, ctx.body.pipeline) }),
    }),
  ];
}
