// The job modules the query workers run, loaded by each worker before it says it is ready (a
// module loaded at a query's first use made that query wait for its whole module graph).
import { CRM_LISTINGS_JOB } from '../actors/crm/index.js';
import { RECORDS_QUERY_JOB } from '../actors/records/index.js';
import { RESERVATION_READS_JOB } from '../actors/reservations/index.js';
import { OUTBOX_JOB } from '../actors/auth/index.js';
import { CATALOG_JOB } from '../actors/storefront/index.js';

export const QUERY_JOBS: readonly string[] = [RECORDS_QUERY_JOB, CRM_LISTINGS_JOB, RESERVATION_READS_JOB, OUTBOX_JOB, CATALOG_JOB];
