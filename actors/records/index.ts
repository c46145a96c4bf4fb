// The records area's public surface: its actor, its API for the edge, the listing every area's
// routes page with, and the names other areas hear on the bus.
export { createRecordsApi, type RecordsApi, type RecordsParts } from './api.js';
export { recordsActor, RECORD_WRITTEN, NOTE_DATATYPE } from './actor.js';
export type { CreateReply } from './messages.js';
export { attributeFilter, INLINE_LISTING_MAX, listRecords, RECORDS_QUERY_JOB, type ListingDeps } from './reads.js';
export { MAX_PIPELINE_STAGES, MAX_RESULT_DOCUMENTS } from './dynamic-query.js';
export type { DriverSort, DynamicFind, FindRequest } from './query-requests.js';
export { ORDER, RESERVATION } from './client-data.js';
