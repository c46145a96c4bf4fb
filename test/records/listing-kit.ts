// Helpers of the listing tests: tickets stored straight into the store (ids not in creation
// order), the store's order, and a listing read whole by page number or by cursor.
import type { StoredRecord } from '../../core/store/record.js';
import { WriteBatch, type Store } from '../../core/store/store.js';
import type { Client } from '../events/setup.js';

export const EPOCH = Date.UTC(2026, 5, 1);

export function listingKit(org: string, store: Store) {
  let seq = 0;
  const skOf = () => 'f1' + (seq++).toString(16).padStart(22, '0');

  /** A ticket as the events area stores it (enough of one for the listing and its response). */
  function ticket(event: string, at: number, data: Record<string, unknown> = {}): StoredRecord {
    const iso = new Date(EPOCH + at).toISOString();
    // Ids not in creation order: the listing's order is its sort value's, then the id.
    const sk = skOf().split('').reverse().join('').replace(/^/, 'a').slice(0, 24);
    const status = (data.status as string | undefined) ?? 'valid';
    return { pk: org, sk, datatype: 'ticket', version: 1, state: status, createdate: iso, modifydate: iso, data: { event, number: `N${seq}`, status, ...data } };
  }

  async function seed(records: StoredRecord[]): Promise<void> {
    for (let i = 0; i < records.length; i += 1000) {
      const b = new WriteBatch();
      for (const r of records.slice(i, i + 1000)) b.putRecord(r);
      await store.commit(b);
    }
  }

  return { ticket, seed };
}

/** The store's order: createdate, then id. */
export const sorted = (rs: StoredRecord[]) => [...rs].sort((a, b) => (a.createdate < b.createdate ? -1 : a.createdate > b.createdate ? 1 : a.sk < b.sk ? -1 : 1)).map((r) => r.sk);

export async function byPages(c: Client, path: string, pageSize: number): Promise<{ sks: string[]; totals: Set<number> }> {
  const sks: string[] = [];
  const totals = new Set<number>();
  for (let page = 1; ; page++) {
    const r = await c.get(`${path}${path.includes('?') ? '&' : '?'}page=${page}&pageSize=${pageSize}`);
    if (r.status !== 200) throw new Error(`${r.status} ${r.text}`);
    sks.push(...r.body.data.map((x: StoredRecord) => x.sk));
    totals.add(r.body.total);
    if (!r.body.hasNext) return { sks, totals };
  }
}

export async function byCursor(c: Client, path: string, pageSize: number, between?: (page: number) => Promise<void>): Promise<{ sks: string[]; totals: Set<number> }> {
  const sks: string[] = [];
  const totals = new Set<number>();
  let after: string | undefined;
  for (let page = 1; ; page++) {
    const r = await c.get(`${path}${path.includes('?') ? '&' : '?'}pageSize=${pageSize}${after ? `&after=${after}` : ''}`);
    if (r.status !== 200) throw new Error(`${r.status} ${r.text}`);
    sks.push(...r.body.data.map((x: StoredRecord) => x.sk));
    totals.add(r.body.total);
    if (!r.body.hasNext) {
      if (r.body.next !== undefined) throw new Error('a last page hands out no cursor');
      return { sks, totals };
    }
    if (typeof r.body.next !== 'string') throw new Error('a page with more after it hands out no cursor');
    after = r.body.next;
    await between?.(page);
  }
}
