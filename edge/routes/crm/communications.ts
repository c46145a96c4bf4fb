// Communications log (spec: Endpoints → CRM (staff)): SMS, calls, everything together, and call
// recordings. Inbound SMS and calls arrive through the phone module's provider webhooks; outbound
// SMS through the inbox (`POST /crm/inbox/update?send=true`). Every list is newest first.
import { Type } from '@sinclair/typebox';
import { COMM_MESSAGE } from '../../../actors/inbox/index.js';
import { CALL_RECORDING, PHONE_CALL } from '../../../actors/phone/index.js';
import type { CrmApi } from '../../../actors/crm/index.js';
import type { Filter } from '../../../core/store/query.js';
import { route, type RouteDef } from '../../route.js';
import { crmList } from './listing.js';
import { Enum, ListOf, PageProps, RecordOf, SinceUntilProps } from './schemas.js';

const TAG = 'Communications';
const Direction = Enum(['inbound', 'outbound']);
const AnyRecord = RecordOf();
const ContactQ = Type.Optional(Type.String({ minLength: 1, maxLength: 320, description: 'A phone number or address on either side' }));

export function communicationRoutes(crm: CrmApi): RouteDef[] {
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
        return crmList(ctx, { list: 'communications', ...q, sources: [{ datatype: COMM_MESSAGE, filter: f }] });
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
        return crmList(ctx, { list: 'communications', ...q, sources: [{ datatype: PHONE_CALL, filter: f }] });
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
        const sources = [];
        if (q.type !== 'call') sources.push({ datatype: COMM_MESSAGE, filter: q.type ? { ...f, 'data.channel': q.type } : f });
        if (!q.type || q.type === 'call') sources.push({ datatype: PHONE_CALL, filter: f });
        return crmList(ctx, { list: 'communications', ...q, sources });
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
        return crmList(ctx, { list: 'communications', ...q, sources: [{ datatype: CALL_RECORDING, filter: q.callSid ? { 'data.callSid': q.callSid } : undefined }] });
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
      handler: (ctx) => crm.recording(ctx.tenant, ctx.params.sid),
    }),
  ];
}
