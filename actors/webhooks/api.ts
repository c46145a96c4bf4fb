// Webhook endpoints and their deliveries (issue 34), as the routes use them. Every write goes
// through the tenant's webhooks actor; reads come from the store. A URL is checked twice: its form
// and every address its host resolves to here, when it is set, and again by the dispatcher before
// each attempt (core/webhooks/url-safety.ts).
import type { ActorRuntime } from '../../core/actor/runtime.js';
import type { Clock } from '../../core/clock.js';
import { appError } from '../../core/errors.js';
import type { WebhookHub } from '../../core/webhooks/hub.js';
import { deliveryId, deliveryNs, ENDPOINT_NS, type Delivery, type Endpoint } from '../../core/webhooks/model.js';
import { WEBHOOK_EVENTS } from '../../core/webhooks/names.js';
import { newSigningSecret } from '../../core/webhooks/signing.js';
import { checkUrlForm, resolveChecked, type UrlPolicy } from '../../core/webhooks/url-safety.js';
import type { Store } from '../../core/store/store.js';
import { WEBHOOKS, WEBHOOKS_KEY, type EndpointChange, type EndpointPatch, type WebhooksMsg } from './messages.js';

/** How long a rotated-out secret keeps signing beside the new one. */
export const ROTATION_GRACE_MS = 24 * 60 * 60 * 1000;

export interface WebhooksDeps {
  readonly store: Store;
  readonly runtime: ActorRuntime;
  readonly clock: Clock;
  /** This node's hub, told of a change at once (absent: it hears the actor's publication). */
  readonly hub: WebhookHub | undefined;
  readonly policy: UrlPolicy;
  readonly maxEndpoints: number;
}

export interface EndpointView {
  id: string;
  url: string;
  events: string[];
  description: string;
  enabled: boolean;
  disabledReason: string | null;
  createdAt: string;
  updatedAt: string;
  /** While a rotated-out secret still signs: until when. */
  previousSecretExpiresAt: string | null;
}

export interface DeliveryView {
  id: string;
  eventId: string;
  endpointId: string;
  type: string;
  state: Delivery['state'];
  attempts: number;
  lastStatus: number | null;
  lastError: string | null;
  durationMs: number | null;
  createdAt: string;
  lastAttemptAt: string | null;
  nextAttemptAt: string | null;
}

const iso = (ms: number | undefined | null): string | null => (ms === undefined || ms === null ? null : new Date(ms).toISOString());

/** The URL as answered: a password it carries is never shown again. */
function shownUrl(raw: string): string {
  try {
    const u = new URL(raw);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return raw;
  }
}

export function endpointView(e: Endpoint, now: number): EndpointView {
  const old = e.secrets.slice(1).filter((s) => s.expiresAt !== undefined && s.expiresAt > now);
  return {
    id: e.id,
    url: shownUrl(e.url),
    events: e.events,
    description: e.description,
    enabled: e.enabled,
    disabledReason: e.disabledReason ?? null,
    createdAt: iso(e.createdAt)!,
    updatedAt: iso(e.updatedAt)!,
    previousSecretExpiresAt: old.length > 0 ? iso(Math.max(...old.map((s) => s.expiresAt!))) : null,
  };
}

export function deliveryView(d: Delivery): DeliveryView {
  return {
    id: deliveryId(d.eventId, d.endpointId),
    eventId: d.eventId,
    endpointId: d.endpointId,
    type: d.type,
    state: d.state,
    attempts: d.attempts,
    lastStatus: d.lastStatus,
    lastError: d.lastError ?? null,
    durationMs: d.lastDurationMs ?? null,
    createdAt: iso(d.createdAt)!,
    lastAttemptAt: iso(d.lastAttemptAt),
    nextAttemptAt: d.state === 'pending' ? iso(d.dueAt) : null,
  };
}

/** Event names as given, checked against the catalogue; `*` stands alone. */
export function checkEvents(events: string[]): string[] {
  const set = [...new Set(events)];
  if (set.includes('*')) {
    if (set.length > 1) throw appError('ERR_VALIDATION', 'body/events: `*` subscribes to every event and stands alone');
    return set;
  }
  const unknown = set.filter((e) => !WEBHOOK_EVENTS.includes(e));
  if (unknown.length > 0) throw appError('ERR_VALIDATION', `body/events: unknown event ${unknown.join(', ')} (the catalogue is in /documentation)`);
  return set;
}

export class WebhooksApi {
  constructor(readonly deps: WebhooksDeps) {}

  private ask<R>(tenant: string, msg: WebhooksMsg): Promise<R> {
    return this.deps.runtime.ask<R>(tenant, WEBHOOKS, WEBHOOKS_KEY, msg);
  }

  /** This node knows the new table at once; the others when the actor's publication reaches them. */
  private async change(tenant: string, msg: WebhooksMsg): Promise<Endpoint> {
    const c = await this.ask<EndpointChange>(tenant, msg);
    if (c.subscriptions) this.deps.hub?.apply(c.subscriptions);
    return c.endpoint;
  }

  private async checkedUrl(raw: string): Promise<string> {
    const url = checkUrlForm(raw, this.deps.policy);
    await resolveChecked(url, this.deps.policy);
    return url.toString();
  }

  async create(tenant: string, by: string, b: { url: string; events: string[]; description?: string; enabled?: boolean }): Promise<EndpointView & { secret: string }> {
    const secret = newSigningSecret();
    // The checks that need no network first.
    const events = checkEvents(b.events);
    const endpoint: Omit<Endpoint, 'id' | 'createdAt' | 'updatedAt'> = {
      url: await this.checkedUrl(b.url),
      events,
      description: b.description ?? '',
      enabled: b.enabled ?? true,
      secrets: [{ secret }],
      createdBy: by,
    };
    const e = await this.change(tenant, { type: 'create', endpoint, max: this.deps.maxEndpoints });
    return { ...endpointView(e, this.deps.clock.now()), secret };
  }

  list(tenant: string): EndpointView[] {
    const now = this.deps.clock.now();
    return this.deps.store
      .listKv<Endpoint>(tenant, ENDPOINT_NS)
      .map((x) => x.value)
      .sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : 1))
      .map((e) => endpointView(e, now));
  }

  private endpoint(tenant: string, id: string): Endpoint {
    const e = this.deps.store.getKv<Endpoint>(tenant, ENDPOINT_NS, id);
    if (!e) throw appError('ERR_NOT_FOUND', `webhook endpoint ${id}`);
    return e;
  }

  get(tenant: string, id: string): EndpointView {
    return endpointView(this.endpoint(tenant, id), this.deps.clock.now());
  }

  async update(tenant: string, id: string, b: EndpointPatch): Promise<EndpointView> {
    this.endpoint(tenant, id);
    const patch: EndpointPatch = { ...b };
    if (b.events !== undefined) patch.events = checkEvents(b.events);
    if (b.url !== undefined) patch.url = await this.checkedUrl(b.url);
    return endpointView(await this.change(tenant, { type: 'update', id, patch }), this.deps.clock.now());
  }

  async remove(tenant: string, id: string): Promise<void> {
    await this.change(tenant, { type: 'delete', id });
    this.deps.hub?.onDeleted(tenant);
  }

  async rotate(tenant: string, id: string): Promise<EndpointView & { secret: string }> {
    const secret = newSigningSecret();
    const e = await this.change(tenant, { type: 'rotate', id, secret, graceMs: ROTATION_GRACE_MS });
    return { ...endpointView(e, this.deps.clock.now()), secret };
  }

  /** The dispatcher's: disables a failing endpoint and tells the Admins. */
  async disable(tenant: string, id: string, since: number): Promise<void> {
    await this.change(tenant, { type: 'disable', id, since });
  }

  async ping(tenant: string, id: string): Promise<{ deliveryId: string; eventId: string }> {
    const r = await this.ask<{ deliveryId: string; eventId: string }>(tenant, { type: 'ping', id });
    this.deps.hub?.queued(tenant, [id]);
    return r;
  }

  async retry(tenant: string, id: string): Promise<DeliveryView> {
    const d = await this.ask<Delivery>(tenant, { type: 'retry', deliveryId: id });
    this.deps.hub?.queued(tenant, [d.endpointId]);
    return deliveryView(d);
  }

  /** The endpoint's deliveries, newest first, `limit` after the cursor `after` (an event id). */
  deliveries(tenant: string, id: string, after: string | undefined, limit: number): { data: DeliveryView[]; next: string | null } {
    this.endpoint(tenant, id);
    const page = this.deps.store.rangeKv<Delivery>(tenant, deliveryNs(id), { after, limit: limit + 1, reverse: true });
    const data = page.slice(0, limit).map((e) => deliveryView(e.value));
    return { data, next: page.length > limit ? data[data.length - 1].eventId : null };
  }
}
