// What the records actor accepts and answers, and its kind's name and key.
import type { IdempotentResult } from '../../core/idempotency.js';
import type { Data, StoredRecord } from '../../core/store/record.js';

export const RECORDS_ACTOR = 'records';

/** Every tenant has one records actor, under this key. */
export const RECORDS_KEY = 'repository';

/** The roles of the verified principal a write is made for (see assertWritable). */
type Writer = { roles: readonly string[] };

export type RecordsMsg =
  | ({
      type: 'create';
      datatype: string;
      data: Data;
      state?: string;
      /** The key and the request's fingerprint (core/idempotency.ts). */
      idempotency?: { key: string; print: string };
    } & Writer)
  | ({ type: 'update'; datatype: string; sk: string; data: Data; version: number; state?: string } & Writer)
  | ({ type: 'update-partial'; datatype: string; sk: string; set: Record<string, unknown>; version?: number } & Writer)
  | ({ type: 'delete'; datatype: string; sk: string; version?: number } & Writer)
  | {
      type: 'add-note';
      subject: { datatype: string; id: string };
      comment: string;
      author: { id: string; email?: string };
    };

export interface CreateReply extends IdempotentResult<StoredRecord> {
  /** True when this answer is the first result of an earlier request with the same key. */
  replayed: boolean;
}
