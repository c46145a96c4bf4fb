// `/notes/reservation/:id` (spec: Endpoints → Customer self-service and notes): staff add notes to
// a reservation (never replacing one) and list them oldest first.
import { Type } from '@sinclair/typebox';
import { assertComment, listNotes } from '../../../actors/records/notes.js';
import { RECORDS_ACTOR, RECORDS_KEY, type RecordsMsg } from '../../../actors/records/records-actor.js';
import type { StoredRecord } from '../../../core/store/record.js';
import type { AppDeps } from '../../deps.js';
import { route, type RouteDef } from '../../route.js';
import { ListOf, RecordId } from './schemas.js';

const TAG = 'Notes';
const RESERVATION = 'reservation';

const Note = Type.Object(
  {
    pk: Type.String(),
    sk: Type.String({ description: 'Note id' }),
    datatype: Type.Literal('note'),
    version: Type.Integer(),
    state: Type.String(),
    createdate: Type.String({ format: 'date-time', description: 'When the note was added' }),
    modifydate: Type.String({ format: 'date-time' }),
    // Optional fields: a note is also an ordinary record that /repository routes can edit.
    data: Type.Object(
      {
        comment: Type.Optional(Type.String()),
        subjectType: Type.Optional(Type.String({ description: 'Datatype of the record the note is on' })),
        subjectId: Type.Optional(Type.String({ description: 'Id of the record the note is on' })),
        author: Type.Optional(
          Type.Object({ id: Type.Optional(Type.String()), email: Type.Optional(Type.String()) }, { additionalProperties: true }),
        ),
      },
      { additionalProperties: true },
    ),
  },
  { additionalProperties: true },
);

export function notesRoutes(deps: AppDeps): RouteDef[] {
  const maxPageSize = deps.config.store.maxPageSize;
  const Params = Type.Object({ id: RecordId });
  return [
    route({
      method: 'POST',
      path: '/notes/reservation/:id',
      auth: 'staff',
      tag: TAG,
      summary: 'Add a note to a reservation',
      description: 'Body `{comment}` (a non-empty string). Adds a note with its author and time; never replaces one.',
      status: 201,
      params: Params,
      body: Type.Object({ comment: Type.String({ description: 'Note text' }) }, { additionalProperties: false }),
      response: Note,
      errors: [404],
      handler: (ctx) => {
        assertComment(ctx.body.comment);
        const p = ctx.principal!;
        const msg: RecordsMsg = {
          type: 'add-note',
          subject: { datatype: RESERVATION, id: ctx.params.id },
          comment: ctx.body.comment,
          author: p.email ? { id: p.sub, email: p.email } : { id: p.sub },
        };
        return ctx.deps.runtime.ask<StoredRecord>(ctx.tenant, RECORDS_ACTOR, RECORDS_KEY, msg);
      },
    }),

    route({
      method: 'GET',
      path: '/notes/reservation/:id',
      auth: 'staff',
      tag: TAG,
      summary: "List a reservation's notes, oldest first",
      description: `Answers the list envelope; query \`p\` (page) and \`ps\` (page size, default 20, at most ${maxPageSize}).`,
      params: Params,
      query: Type.Object({
        p: Type.Optional(Type.Integer({ minimum: 1 })),
        ps: Type.Optional(Type.Integer({ minimum: 1, maximum: maxPageSize })),
      }),
      response: ListOf(Note),
      errors: [404],
      handler: (ctx) =>
        listNotes(ctx.deps, ctx.tenant, { datatype: RESERVATION, id: ctx.params.id }, ctx.query.p ?? 1, ctx.query.ps ?? deps.config.store.defaultPageSize),
    }),
  ];
}
