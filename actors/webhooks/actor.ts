// The tenant's webhooks actor: every change of the organisation's endpoints, one at a time, and
// the writes that queue a ping or a retry. After each endpoint change it publishes the tenant's
// subscription table (core/webhooks/hub.ts), which every node's hub applies: the door's `wants`
// stays a lookup in memory. It reads its own writes, so two changes racing see each other.
import type { ActorContext, ActorKind } from '../../core/actor/runtime.js';
import { appError } from '../../core/errors.js';
import { newId } from '../../core/ids.js';
import { queueMessage } from '../../core/outbox.js';
import { queueEvent, type SubscriptionsMessage } from '../../core/webhooks/hub.js';
import {
  deliveryNs,
  ENDPOINT_NS,
  GONE_NS,
  HEALTH_NS,
  LANE_NS,
  laneKey,
  parseDeliveryId,
  SUBSCRIPTIONS_SUBJECT,
  tableOf,
  type Delivery,
  type Endpoint,
} from '../../core/webhooks/model.js';
import { PING } from '../../core/webhooks/names.js';
import { redactUrl } from '../../core/webhooks/url-safety.js';
import { WEBHOOKS, type EndpointChange, type WebhooksMsg } from './messages.js';

interface State {
  /** Orders this actor's publications within one millisecond. */
  seq: number;
}

/** Every refusal is checked before anything is written. */
export const webhooksActor: ActorKind<State, WebhooksMsg, unknown> = {
  kind: WEBHOOKS,
  readsOwnWrites: true,
  refusalKeepsState: true,
  activate: () => ({ seq: 0 }),
  receive(st, msg, ctx) {
    const now = ctx.clock.now();
    const get = (id: string) => ctx.store.getKv<Endpoint>(ctx.tenant, ENDPOINT_NS, id);
    const must = (id: string) => {
      const e = get(id);
      if (!e) throw appError('ERR_NOT_FOUND', `webhook endpoint ${id}`);
      return e;
    };
    switch (msg.type) {
      case 'create': {
        const n = ctx.store.listKv(ctx.tenant, ENDPOINT_NS).length;
        if (n >= msg.max) throw appError('ERR_CONFLICT', `the organisation has ${n} webhook endpoints, the most it may have (WEBHOOK_MAX_ENDPOINTS); delete one first`);
        const e: Endpoint = { ...msg.endpoint, id: newId(now), createdAt: now, updatedAt: now };
        return change(st, ctx, e, now);
      }
      case 'update': {
        const e: Endpoint = { ...must(msg.id), updatedAt: now };
        const p = msg.patch;
        if (p.url !== undefined) e.url = p.url;
        if (p.events !== undefined) e.events = p.events;
        if (p.description !== undefined) e.description = p.description;
        if (p.enabled !== undefined && p.enabled !== e.enabled) {
          e.enabled = p.enabled;
          delete e.disabledReason;
          e.disabledAt = p.enabled ? undefined : now;
          if (e.disabledAt === undefined) delete e.disabledAt;
          // Enabled again: its failures so far do not count towards disabling it again.
          if (p.enabled) ctx.batch.deleteKv(ctx.tenant, HEALTH_NS, e.id);
        }
        return change(st, ctx, e, now);
      }
      case 'delete': {
        const e = must(msg.id);
        ctx.batch.deleteKv(ctx.tenant, ENDPOINT_NS, e.id);
        ctx.batch.deleteKv(ctx.tenant, HEALTH_NS, e.id);
        // Its deliveries and lane go with it, removed by the dispatcher in bounded steps (however
        // many it holds, this write stays small); queued ones are dropped when met.
        ctx.batch.putKv(ctx.tenant, GONE_NS, e.id, now);
        return { endpoint: e, subscriptions: publish(st, ctx, now, e.id, undefined) } satisfies EndpointChange;
      }
      case 'rotate': {
        const e = must(msg.id);
        const kept = e.secrets.filter((s) => s.expiresAt === undefined || s.expiresAt > now).map((s) => ({ secret: s.secret, expiresAt: Math.min(s.expiresAt ?? Infinity, now + msg.graceMs) }));
        return change(st, ctx, { ...e, secrets: [{ secret: msg.secret }, ...kept], updatedAt: now }, now);
      }
      case 'disable': {
        const e = must(msg.id);
        if (!e.enabled) return { endpoint: e };
        const hours = Math.round((now - msg.since) / 3_600_000);
        const reason = `failing since ${new Date(msg.since).toISOString()} (${hours} h) without a successful delivery`;
        const out = change(st, ctx, { ...e, enabled: false, disabledReason: reason, disabledAt: now, updatedAt: now }, now);
        for (const to of adminEmails(ctx)) {
          queueMessage(
            ctx.batch,
            ctx.tenant,
            {
              channel: 'email',
              to,
              kind: 'webhook-disabled',
              subject: 'A webhook endpoint was disabled',
              body:
                `The webhook endpoint ${e.id} (${redactUrl(e.url)}) of your organisation was disabled: it has been ${reason}. ` +
                'Events are no longer sent to it. Fix the receiver, then enable it again (PUT /webhooks/endpoints/:id with enabled: true) ' +
                'and retry the failed deliveries (POST /webhooks/deliveries/:id/retry).',
            },
            now,
          );
        }
        return out;
      }
      case 'ping': {
        const e = must(msg.id);
        const { eventId } = queueEvent(ctx.batch, ctx.tenant, [e.id], PING, { endpointId: e.id, message: 'a test event sent from POST /webhooks/endpoints/:id/test' }, now);
        return { deliveryId: eventId + e.id, eventId };
      }
      case 'retry': {
        const ids = parseDeliveryId(msg.deliveryId);
        const d = ids && ctx.store.getKv<Delivery>(ctx.tenant, deliveryNs(ids.endpointId), ids.eventId);
        if (!ids || !d) throw appError('ERR_NOT_FOUND', `webhook delivery ${msg.deliveryId}`);
        must(ids.endpointId);
        if (d.state === 'pending' && d.dueAt !== null) ctx.batch.deleteKv(ctx.tenant, LANE_NS, laneKey(ids.endpointId, d.dueAt, ids.eventId));
        const next: Delivery = { ...d, state: 'pending', dueAt: now };
        ctx.batch.putKv(ctx.tenant, deliveryNs(ids.endpointId), ids.eventId, next);
        ctx.batch.putKv(ctx.tenant, LANE_NS, laneKey(ids.endpointId, now, ids.eventId), 1);
        return next;
      }
    }
  },
};

function change(st: State, ctx: ActorContext, e: Endpoint, now: number): EndpointChange {
  ctx.batch.putKv(ctx.tenant, ENDPOINT_NS, e.id, e);
  return { endpoint: e, subscriptions: publish(st, ctx, now, e.id, e) };
}

/** Publishes (after the commit) the tenant's table with endpoint `id` as `e` (undefined: deleted). */
function publish(st: State, ctx: ActorContext, now: number, id: string, e: Endpoint | undefined): SubscriptionsMessage {
  const all = new Map(ctx.store.listKv<Endpoint>(ctx.tenant, ENDPOINT_NS).map((x) => [x.key, x.value]));
  if (e) all.set(id, e);
  else all.delete(id);
  const m: SubscriptionsMessage = { tenant: ctx.tenant, v: now * 1000 + (st.seq++ % 1000), table: tableOf(all.values()) };
  ctx.publish(SUBSCRIPTIONS_SUBJECT, m);
  return m;
}

/** The organisation's active Admins with an email address. */
function adminEmails(ctx: ActorContext): string[] {
  const out: string[] = [];
  for (const u of ctx.store.scan(ctx.tenant, 'user')) {
    const d = u.data as { email?: unknown; roles?: unknown; status?: unknown };
    if (typeof d.email === 'string' && Array.isArray(d.roles) && d.roles.includes('Admin') && (d.status === undefined || d.status === 'active')) out.push(d.email);
  }
  return out;
}
