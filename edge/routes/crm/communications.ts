// Communications log (spec: Endpoints → CRM (staff)): SMS, calls, everything together, and call
// recordings. Inbound SMS and calls arrive through the phone module's provider webhooks; outbound
// SMS through the inbox (`POST /crm/inbox/update?send=true`). Every list is newest first.
import { Type } from '@sinclair/typebox';
import { normalizePhone } from '../../../actors/inbox/contact.js';
import { COMM_MESSAGE } from '../../../actors/inbox/conversation.js';
import { CALL_RECORDING, PHONE_CALL, recordingRecordId } from '../../../actors/phone/call.js';
import { appError } from '../../../core/errors.js';
import type { StoredRecord } from '../../../core/store/record.js';
import type { Filter } from '../../../core/store/query.js';
import { route, type RequestContext, type RouteDef } from '../../route.js';
import { Enum, inWindow, ListOf, newestFirst, pageOf, PageProps, RecordOf, SinceUntilProps } from './schemas.js';

const TAG = 'Communications';
const Direction = Enum(['inbound', 'outbound']);
const AnyRecord = RecordOf();
const ContactQ = Type.Optional(Type.String({ minLength: 1, maxLength: 320, description: 'A phone number or address on either side' }));

/** Matches a record whose either side is `contact` (phone numbers compared without punctuation). */
function involves(r: StoredRecord, contact: string | undefined): boolean {
  if (!contact) return true;
  const want = normalizePhone(contact) ?? contact.trim().toLowerCase();
  for (const k of ['from', 'to', 'contact']) {
    const v = r.data[k];
    if (typeof v !== 'string') continue;
    if ((normalizePhone(v) ?? v.toLowerCase()) === want) return true;
  }
  return false;
}

/** The page of `records` that involve the contact and fall in the window, newest first. */
function commsPage(ctx: RequestContext, records: StoredRecord[], q: { contact?: string; since?: string; until?: string; page?: number; pageSize?: number }) {
  const all = records.filter((r) => involves(r, q.contact) && inWindow(r, q.since, q.until)).sort(newestFirst);
  return pageOf(ctx.deps, all, q);
}

export function communicationRoutes(): RouteDef[] {
  return [
    route({
      method: 'GET',
      path: '/crm/communications/sms',
      auth: 'staff',
      tag: TAG,
      summary: 'SMS messages, inbound and outbound',
      query: Type.Object({ direction: Type.Optional(Direction), contact: ContactQ, ...SinceUntilProps, ...PageProps }),
      response: ListOf(AnyRecord),
      handler: (ctx) => {
        const q = ctx.query;
        const f: Filter = { 'data.channel': 'sms' };
        if (q.direction) f['data.direction'] = q.direction;
        return commsPage(ctx, ctx.deps.store.scan(ctx.tenant, COMM_MESSAGE, f), q);
      },
    }),
    route({
      method: 'GET',
      path: '/crm/communications/calls',
      auth: 'staff',
      tag: TAG,
      summary: 'Calls, with status, duration and recording ids',
      query: Type.Object({
        direction: Type.Optional(Direction),
        status: Type.Optional(Type.String({ minLength: 1, maxLength: 32 })),
        contact: ContactQ,
        ...SinceUntilProps,
        ...PageProps,
      }),
      response: ListOf(AnyRecord),
      handler: (ctx) => {
        const q = ctx.query;
        const f: Filter = {};
        if (q.direction) f['data.direction'] = q.direction;
        if (q.status) f['data.status'] = q.status;
        return commsPage(ctx, ctx.deps.store.scan(ctx.tenant, PHONE_CALL, f), q);
      },
    }),
    route({
      method: 'GET',
      path: '/crm/communications/all',
      auth: 'staff',
      tag: TAG,
      summary: 'Every communication: messages of every channel and calls, merged',
      description: 'Each item is a record; its `datatype` tells a message (`comm_message`, see `data.channel`) from a call (`phone_call`).',
      query: Type.Object({
        type: Type.Optional(
          Enum(['sms', 'email', 'chat', 'social', 'call'], { description: 'Only one kind' }),
        ),
        direction: Type.Optional(Direction),
        contact: ContactQ,
        ...SinceUntilProps,
        ...PageProps,
      }),
      response: ListOf(AnyRecord),
      handler: (ctx) => {
        const q = ctx.query;
        const f: Filter = q.direction ? { 'data.direction': q.direction } : {};
        const messages = q.type === 'call' ? [] : ctx.deps.store.scan(ctx.tenant, COMM_MESSAGE, q.type ? { ...f, 'data.channel': q.type } : f);
        const calls = q.type && q.type !== 'call' ? [] : ctx.deps.store.scan(ctx.tenant, PHONE_CALL, f);
        return commsPage(ctx, [...messages, ...calls], q);
      },
    }),
    route({
      method: 'GET',
      path: '/crm/communications/recordings',
      auth: 'staff',
      tag: TAG,
      summary: 'Call recordings',
      query: Type.Object({
        callSid: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
        contact: ContactQ,
        ...SinceUntilProps,
        ...PageProps,
      }),
      response: ListOf(AnyRecord),
      handler: (ctx) => {
        const q = ctx.query;
        return commsPage(ctx, ctx.deps.store.scan(ctx.tenant, CALL_RECORDING, q.callSid ? { 'data.callSid': q.callSid } : undefined), q);
      },
    }),
    route({
      method: 'GET',
      path: '/crm/communications/recordings/:sid',
      auth: 'staff',
      tag: TAG,
      summary: "One recording, by the provider's recording SID",
      params: Type.Object({ sid: Type.String({ minLength: 1, maxLength: 64 }) }),
      response: AnyRecord,
      errors: [404],
      handler: (ctx) => {
        const rec = ctx.deps.store.getRecord(ctx.tenant, CALL_RECORDING, recordingRecordId(ctx.params.sid));
        if (!rec) throw appError('ERR_NOT_FOUND', `recording ${ctx.params.sid}`);
        return rec;
      },
    }),
  ];
}
