// Notes on a record (spec: Fields known per kind → note `{comment}`; Endpoints → `/notes/reservation/:id`).
// A note is a record of datatype `note` pointing at its subject; adding one never replaces
// another (the records actor writes it), and a subject's notes list oldest first.
import { appError } from '../../core/errors.js';
import type { ListResult } from '../../core/store/record.js';
import { NOTE_DATATYPE } from './actor.js';
import { listRecords, type ListingDeps } from './reads.js';

export const MAX_COMMENT_LENGTH = 10_000;

/** Throws 400 unless `comment` is a string with something other than white space in it. */
export function assertComment(comment: unknown): asserts comment is string {
  if (typeof comment !== 'string') throw appError('ERR_VALIDATION', 'body/comment must be a string');
  if (comment.trim() === '') throw appError('ERR_VALIDATION', 'body/comment must not be empty');
  if (comment.length > MAX_COMMENT_LENGTH) throw appError('ERR_VALIDATION', `body/comment must be at most ${MAX_COMMENT_LENGTH} characters`);
}

export function listNotes(
  deps: ListingDeps,
  tenant: string,
  subject: { datatype: string; id: string },
  page: number,
  pageSize: number,
): Promise<ListResult> {
  if (!deps.store.getRecord(tenant, subject.datatype, subject.id)) throw appError('ERR_NOT_FOUND', `${subject.datatype} ${subject.id}`);
  return listRecords(
    deps,
    tenant,
    NOTE_DATATYPE,
    { 'data.subjectId': subject.id, 'data.subjectType': subject.datatype },
    { sort: 'createdate', sortType: 'asc', page, pageSize },
  );
}
