// A route is data: method, path, access, documentation and TypeBox schemas, plus one handler.
// The edge compiles each entry's validators and serializer once at start-up, and the OpenAPI
// document is generated from the same table.
import type { Static, TSchema } from '@sinclair/typebox';
import type { Principal } from '../core/auth/tokens.js';
import type { AppDeps } from './deps.js';

declare module './deps.js' {
  interface AppDeps {
    /** Routes registered so far (the reference and OpenAPI read it). */
    readonly routes: readonly RouteDef[];
  }
}

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** Who may call: `none` public, `customer` any signed-in customer or staff, `staff` role User. */
export type Access = 'none' | 'customer' | 'staff';

/** Whether the `orgid` header must name a known organisation. */
export type TenantMode = 'required' | 'optional' | 'none';

export interface RequestContext<P = any, Q = any, B = any> {
  readonly method: Method;
  /** Path as requested, without the query string. */
  readonly url: string;
  readonly params: P;
  readonly query: Q;
  readonly body: B;
  readonly rawBody: Buffer | undefined;
  /** Request headers, names lower-cased. */
  readonly headers: Readonly<Record<string, string>>;
  /** The tenant named by `orgid` (validated), when the route has one. */
  readonly tenant: string;
  /** The authenticated caller, if any (always set on `customer` and `staff` routes). */
  readonly principal: Principal | undefined;
  readonly requestId: string;
  readonly ip: string;
  readonly deps: AppDeps;
  /** Response status; defaults to the route's `status` (200 unless declared). */
  status: number;
  /** Extra response headers. */
  readonly responseHeaders: Record<string, string>;
  /** Content type of a non-JSON answer (the handler then returns a string or Buffer). */
  type?: string;
  /** Set on `stream: true` routes: the open response, written chunk by chunk (see ResponseStream). */
  readonly stream?: ResponseStream;
}

/**
 * A streamed answer (Server-Sent Events and the like). Status and headers (ctx.status, ctx.type,
 * ctx.responseHeaders) go out with the first write. `write` returns false when the client is
 * behind: stop and continue in `onDrain`. Nothing is written after the client went away.
 */
export interface ResponseStream {
  write(chunk: string): boolean;
  /** Called once, the next time the socket can take more after a write returned false. */
  onDrain(cb: () => void): void;
  /** Called once when the stream ends, by `end()` or because the client went away. */
  onClose(cb: () => void): void;
  end(chunk?: string): void;
  readonly closed: boolean;
}

export interface RouteDef<
  P extends TSchema = TSchema,
  Q extends TSchema = TSchema,
  B extends TSchema = TSchema,
  R extends TSchema = TSchema,
> {
  method: Method;
  path: string;
  auth: Access;
  /** Further roles the caller needs (any one of them). */
  roles?: string[];
  /**
   * An enrolled scanner device (`Authorization: Device <token>`, actors/devices) may call this
   * route: the door's routes set it. Every other route refuses a device credential with 403,
   * whatever its `auth`. A route that sets it checks the device's scope itself (its events, list).
   */
  device?: boolean;
  tenant?: TenantMode;
  /**
   * A `tenant: 'optional'` route whose request may name the organisation elsewhere than the orgid
   * header (sign-in's body `orgId`, the organisation a refresh token was issued for): a cluster
   * node that does not hold that organisation sends the request to the one that does, as it does
   * for the header. Asked only in cluster mode, without the header; `body` is the parsed JSON body
   * (undefined when there is none or it does not parse). The owner checks everything again.
   */
  tenantHint?: (headers: Readonly<Record<string, string>>, body: unknown) => string | undefined;
  /** The reference section this route is listed under. */
  tag: string;
  summary: string;
  description?: string;
  operationId?: string;
  params?: P;
  query?: Q;
  body?: B;
  /** Schema of the success answer; fields outside it are never sent. */
  response?: R;
  /** Success status (default 200). */
  status?: number;
  /** Content types accepted for the body (default JSON). */
  consumes?: string[];
  /** Extra error statuses this route documents (400, 401, 403, 429, 500 are added as they apply). */
  errors?: number[];
  /** Largest body this route accepts, overriding the global cap. */
  maxBodyBytes?: number;
  /** The handler answers through `ctx.stream` (its return value is ignored). */
  stream?: boolean;
  /**
   * `address`: also charged to the caller's address (unauthenticated sign-in, lookup, magic code
   * and app-key routes, where there is no organisation to charge yet). Every route with a
   * tenant is charged to that organisation's plan.
   */
  rateLimit?: 'address';
  /**
   * A check of the caller alone, run before the params, query and body are validated: a caller
   * the route refuses whatever they send hears that, not a list of field errors.
   */
  guard?(caller: { tenant: string; principal: Principal | undefined; deps: AppDeps }): void;
  handler(
    ctx: RequestContext<
      P extends TSchema ? Static<P> : never,
      Q extends TSchema ? Static<Q> : never,
      B extends TSchema ? Static<B> : never
    >,
  ): unknown | Promise<unknown>;
}

/** Identity function that keeps the schema types flowing into the handler. */
export function route<
  P extends TSchema = TSchema,
  Q extends TSchema = TSchema,
  B extends TSchema = TSchema,
  R extends TSchema = TSchema,
>(def: RouteDef<P, Q, B, R>): RouteDef {
  return def as unknown as RouteDef;
}

/** `/a/:id/b` → ['id'] */
export function paramNames(path: string): string[] {
  return [...path.matchAll(/:([A-Za-z0-9_]+)/g)].map((m) => m[1]);
}
