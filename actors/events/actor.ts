// Events, their ticket types, sessions, participants and media: one actor per tenant (key `_`),
// so a slug is claimed by exactly one event and read-check-writes on these records never race.
// Ticket records and check-in lists are not written here: each event's scanner actor owns those
// (an event's lists are deleted with it here, and its scanner rereads them on reload). Low traffic, so
// refusals simply throw (the runtime's reload of this actor costs nothing). Emails a change causes
// (media shared) are queued in the outbox in the change's own batch (core/outbox.ts).
import type { ActorContext, ActorKind } from '../../core/actor/runtime.js';
import { AppError, appError } from '../../core/errors.js';
import { newId } from '../../core/ids.js';
import { queueMessage } from '../../core/outbox.js';
import { newRecord, nextVersion, type StoredRecord } from '../../core/store/record.js';
import { CHECKIN_LIST, RecordOverlay } from '../scanner/index.js';
import {
  EVENT,
  EVENT_MEDIA,
  EVENT_PARTICIPANT,
  EVENT_SESSION,
  exponentOf,
  kebab,
  majorFields,
  parsePrice,
  slugFrom,
  SOLD_NS,
  storedMinor,
  TICKET_TYPE,
  UNKNOWN_ZONE,
  type SoldCounts,
} from '../event-records/index.js';
import { type ChildKind, EVENTS, type EventsMsg, type EventWithTypes, type PerkInput, type TicketTypeInput, type ZoneInput } from './messages.js';

interface State {
  overlay: RecordOverlay;
  /** Slugs this activation claimed or released; the store has not seen them all yet. */
  slugs: Map<string, string | null>;
}

type Data = Record<string, any>;

function slugOwner(st: State, ctx: ActorContext, slug: string): string | null {
  if (st.slugs.has(slug)) return st.slugs.get(slug)!;
  return ctx.store.find(ctx.tenant, EVENT, { 'data.slug': slug }, { pageSize: 1 }).data[0]?.sk ?? null;
}

function zonesOf(input: ZoneInput[]): Data[] {
  const seen = new Set<string>();
  return input.map((z, i) => {
    const id = z.id ?? kebab(z.name, 64);
    if (id === UNKNOWN_ZONE) throw appError('ERR_VALIDATION', `body/zones/${i}/id "${UNKNOWN_ZONE}" is reserved for scans without a zone`);
    if (seen.has(id)) throw appError('ERR_VALIDATION', `body/zones/${i}/id "${id}" is used by two zones`);
    seen.add(id);
    return { id, name: z.name, capacity: z.capacity ?? null };
  });
}

function perksOf(input: PerkInput[], at: string): Data[] {
  const seen = new Set<string>();
  return input.map((p, i) => {
    const id = p.id ?? kebab(p.name, 64);
    if (seen.has(id)) throw appError('ERR_VALIDATION', `${at}/perks/${i}/id "${id}" is used by two perks`);
    seen.add(id);
    return { id, name: p.name, description: p.description ?? null };
  });
}

function checkDates(start: unknown, end: unknown): void {
  if (typeof start === 'string' && typeof end === 'string' && Date.parse(end) < Date.parse(start)) {
    throw appError('ERR_VALIDATION', 'body/endDate must not be before body/startDate');
  }
}

function soldTotal(ctx: ActorContext, eventId: string): number {
  return ctx.store.getKv<SoldCounts>(ctx.tenant, SOLD_NS, eventId)?.total ?? 0;
}

/**
 * Creates or updates the ticket types listed; types not listed are left as they are. Prices are
 * written in major units of the event currency with the unit marker (a type stored in cents
 * before is rewritten so when it is changed).
 */
function upsertTypes(st: State, ctx: ActorContext, eventId: string, input: TicketTypeInput[], exponent: number, now: number): StoredRecord[] {
  const out: StoredRecord[] = [];
  input.forEach((t, i) => {
    const at = `body/ticketTypes/${i}`;
    const price = t.price === undefined ? undefined : parsePrice(t.price, `${at}/price`, exponent);
    if (t.id) {
      const cur = st.overlay.get(TICKET_TYPE, t.id);
      if (cur && cur.data.event !== eventId) throw appError('ERR_VALIDATION', `${at}/id ${t.id} is a ticket type of another event`);
      if (cur) {
        const data: Data = { ...cur.data };
        for (const k of ['title', 'colour', 'quantity', 'requiresActivation', 'description'] as const) {
          if (t[k] !== undefined) data[k] = t[k];
        }
        Object.assign(data, majorFields({ price: price ?? storedMinor(cur.data, 'price', exponent) }, exponent));
        if (t.perks) data.perks = perksOf(t.perks, at);
        const next = nextVersion(cur, { data }, now);
        st.overlay.put(ctx.batch, next, cur.version);
        out.push(next);
        return;
      }
    }
    if (!t.title) throw appError('ERR_VALIDATION', `${at}/title is required`);
    const rec = newRecord(
      ctx.tenant,
      TICKET_TYPE,
      {
        event: eventId,
        title: t.title,
        colour: t.colour ?? null,
        ...majorFields({ price: price ?? 0 }, exponent),
        quantity: t.quantity ?? null,
        perks: perksOf(t.perks ?? [], at),
        requiresActivation: t.requiresActivation ?? false,
        description: t.description ?? null,
      },
      { sk: t.id ?? newId(now), state: 'active', now },
    );
    st.overlay.put(ctx.batch, rec, 0);
    out.push(rec);
  });
  return out;
}

/** Every ticket type of the event, as this actor last wrote it, oldest first. */
function typesOf(st: State, ctx: ActorContext, eventId: string, written: StoredRecord[]): StoredRecord[] {
  const byId = new Map<string, StoredRecord>();
  for (const r of ctx.store.scan(ctx.tenant, TICKET_TYPE, { 'data.event': eventId })) byId.set(r.sk, st.overlay.get(TICKET_TYPE, r.sk) ?? r);
  for (const r of written) byId.set(r.sk, r);
  return [...byId.values()].sort((a, b) => (a.createdate < b.createdate ? -1 : a.createdate > b.createdate ? 1 : a.sk < b.sk ? -1 : a.sk > b.sk ? 1 : 0));
}

function eventOf(st: State, id: string): StoredRecord {
  const ev = st.overlay.get(EVENT, id);
  if (!ev) throw appError('ERR_NOT_FOUND', `event ${id}`);
  return ev;
}

function childOf(st: State, datatype: ChildKind, id: string): StoredRecord {
  const rec = st.overlay.get(datatype, id);
  if (!rec) throw appError('ERR_NOT_FOUND', `${datatype.replace('event_', '')} ${id}`);
  return rec;
}

function checkVersion(rec: StoredRecord, version: number | undefined): void {
  if (version !== undefined && version !== rec.version) {
    throw new AppError('ERR_VERSION_CONFLICT', [`${rec.datatype} ${rec.sk}`, version, rec.version]);
  }
}

function receive(st: State, msg: EventsMsg, ctx: ActorContext): unknown {
  const now = ctx.clock.now();
  const tenant = ctx.tenant;
  switch (msg.type) {
    case 'create-event': {
      const i = msg.input;
      checkDates(i.startDate, i.endDate);
      let slug = i.slug ?? slugFrom(i.name);
      if (slugOwner(st, ctx, slug)) {
        if (i.slug) throw appError('ERR_CONFLICT', `an event with slug "${slug}" already exists`);
        const base = slug;
        for (let n = 2; slugOwner(st, ctx, slug); n++) slug = `${base}-${n}`;
      }
      const id = newId(now);
      const zones = zonesOf(i.zones ?? []);
      const ticketTypes = upsertTypes(st, ctx, id, i.ticketTypes ?? [], exponentOf(i.currency ?? 'USD'), now);
      const event = newRecord(
        tenant,
        EVENT,
        {
          name: i.name,
          slug,
          description: i.description ?? null,
          startDate: i.startDate ?? null,
          endDate: i.endDate ?? null,
          timezone: i.timezone ?? 'UTC',
          venue: i.venue ?? null,
          currency: i.currency ?? 'USD',
          capacity: i.capacity ?? null,
          zones,
          allowReentry: i.allowReentry ?? true,
          codeWindowSeconds: i.codeWindowSeconds ?? 30,
          codeSkewSeconds: i.codeSkewSeconds ?? 60,
          status: 'draft',
          createdBy: msg.by,
        },
        { sk: id, now },
      );
      st.overlay.put(ctx.batch, event, 0);
      st.slugs.set(slug, id);
      return { event, ticketTypes } satisfies EventWithTypes;
    }
    case 'update-event': {
      const cur = eventOf(st, msg.eventId);
      checkVersion(cur, msg.version);
      const i = msg.input;
      const data: Data = { ...cur.data };
      if (i.slug !== undefined && i.slug !== data.slug) {
        if (slugOwner(st, ctx, i.slug)) throw appError('ERR_CONFLICT', `an event with slug "${i.slug}" already exists`);
        // Tickets may name their event by slug (spec: data.event); a sold event's slug stays.
        if (soldTotal(ctx, cur.sk) > 0) throw appError('ERR_CONFLICT', 'the slug of an event with tickets cannot change');
        st.slugs.set(data.slug, null);
        st.slugs.set(i.slug, cur.sk);
        data.slug = i.slug;
      }
      for (const k of [
        'name',
        'description',
        'startDate',
        'endDate',
        'timezone',
        'venue',
        'currency',
        'capacity',
        'allowReentry',
        'codeWindowSeconds',
        'codeSkewSeconds',
      ] as const) {
        if (i[k] !== undefined) data[k] = i[k];
      }
      checkDates(data.startDate, data.endDate);
      if (i.zones) data.zones = zonesOf(i.zones);
      const written = upsertTypes(st, ctx, cur.sk, i.ticketTypes ?? [], exponentOf(data.currency), now);
      const event = nextVersion(cur, { data }, now);
      st.overlay.put(ctx.batch, event, cur.version);
      return { event, ticketTypes: typesOf(st, ctx, cur.sk, written) } satisfies EventWithTypes;
    }
    case 'publish-event': {
      const cur = eventOf(st, msg.eventId);
      if (cur.data.status === 'published') return cur;
      const event = nextVersion(
        cur,
        { state: 'published', data: { ...cur.data, status: 'published', publishedAt: new Date(now).toISOString(), publishedBy: msg.by } },
        now,
      );
      st.overlay.put(ctx.batch, event, cur.version);
      return event;
    }
    case 'delete-event': {
      const cur = eventOf(st, msg.eventId);
      const sold = soldTotal(ctx, cur.sk);
      if (sold > 0) throw appError('ERR_CONFLICT', `the event has ${sold} live tickets; cancel or refund them first`);
      st.overlay.delete(ctx.batch, cur);
      for (const datatype of [TICKET_TYPE, EVENT_SESSION, EVENT_PARTICIPANT, EVENT_MEDIA, CHECKIN_LIST]) {
        for (const r of ctx.store.scan(tenant, datatype, { 'data.event': cur.sk })) st.overlay.delete(ctx.batch, st.overlay.get(datatype, r.sk) ?? r);
      }
      st.slugs.set(cur.data.slug as string, null);
      return true;
    }
    case 'create-child': {
      eventOf(st, msg.eventId);
      const rec = newRecord(tenant, msg.datatype, { ...msg.data, event: msg.eventId }, { state: msg.state, now });
      st.overlay.put(ctx.batch, rec, 0);
      return rec;
    }
    case 'update-child': {
      const cur = childOf(st, msg.datatype, msg.id);
      checkVersion(cur, msg.version);
      const data: Data = { ...cur.data, ...msg.patch, event: cur.data.event };
      if (msg.datatype === EVENT_SESSION && typeof data.startTime === 'string' && typeof data.endTime === 'string' && Date.parse(data.endTime) <= Date.parse(data.startTime)) {
        throw appError('ERR_VALIDATION', 'body/endTime must be after body/startTime');
      }
      const next = nextVersion(cur, { data }, now);
      st.overlay.put(ctx.batch, next, cur.version);
      return next;
    }
    case 'delete-child': {
      const cur = childOf(st, msg.datatype, msg.id);
      st.overlay.delete(ctx.batch, cur);
      return true;
    }
    case 'confirm-participant': {
      const cur = childOf(st, EVENT_PARTICIPANT, msg.id);
      if (cur.data.status === 'confirmed') return cur;
      const next = nextVersion(
        cur,
        { state: 'confirmed', data: { ...cur.data, status: 'confirmed', confirmedAt: new Date(now).toISOString(), confirmedBy: msg.by } },
        now,
      );
      st.overlay.put(ctx.batch, next, cur.version);
      return next;
    }
    case 'media-shared': {
      const at = new Date(now).toISOString();
      const media = msg.ids.map((id) => {
        const cur = childOf(st, EVENT_MEDIA, id);
        const shares = Array.isArray(cur.data.shares) ? (cur.data.shares as Data[]) : [];
        const next = nextVersion(
          cur,
          { data: { ...cur.data, shares: [...shares, { to: msg.recipients, at, by: msg.by }].slice(-50), shareCount: ((cur.data.shareCount as number) ?? 0) + msg.recipients.length, lastSharedAt: at } },
          now,
        );
        st.overlay.put(ctx.batch, next, cur.version);
        return next;
      });
      const lines = media.map((m) => `- ${m.data.title}: ${m.data.url}`).join('\n');
      for (const to of msg.recipients) {
        queueMessage(
          ctx.batch,
          ctx.tenant,
          { channel: 'email', to, subject: msg.subject, body: `${msg.note ? msg.note + '\n\n' : ''}${lines}`, kind: 'event-media', payload: { eventId: msg.eventId, mediaIds: msg.ids } },
          now,
        );
      }
      return media;
    }
  }
}

export const eventsActor: ActorKind<State, EventsMsg, unknown> = {
  kind: EVENTS,
  activate: (ctx) => ({ overlay: new RecordOverlay(ctx.store, ctx.tenant), slugs: new Map() }),
  receive,
};
