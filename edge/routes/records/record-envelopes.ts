// The answers of GET /repository/get and POST /repository/find written from each record's
// envelope, which the store keeps as text while no write changes the record
// (core/store/record-cache.ts): a hot record is neither read, decoded nor serialized again. The
// bytes are the routes' own serializers' (the record envelope's, and the list envelope's around
// the records).
import type { RecordText, TextPage } from '../../../core/store/record-cache.js';
import { serializerOf } from '../../compile.js';
import { JSON_TYPE } from '../../http/answer-headers.js';
import type { RequestContext } from '../../route.js';
import { RecordList, RecordSchema } from './schemas.js';

const listJson = serializerOf(RecordList);
/** A record's envelope as the record routes' serializer writes it: one function, so the store's texts are shared by every read. */
export const envelopeText: RecordText = serializerOf(RecordSchema);
/** What the list serializer writes for no records, up to where the list's other fields follow. */
const EMPTY_DATA = '{"data":[]';

/** The answer of a read of one record (JSON text the edge sends as it is). */
export function recordAnswer(ctx: RequestContext, text: string): string {
  ctx.type = JSON_TYPE;
  return text;
}

/** The list envelope of a find; records that came as texts are spliced in where the list serializer writes them. */
export function listAnswer(ctx: RequestContext, res: TextPage): string {
  ctx.type = JSON_TYPE;
  const { texts, ...page } = res;
  if (!texts) return listJson(page);
  const rest = listJson({ ...page, data: [] });
  if (!rest.startsWith(EMPTY_DATA)) throw new Error('the list serializer no longer writes `data` first');
  return '{"data":[' + texts.join(',') + ']' + rest.slice(EMPTY_DATA.length);
}
