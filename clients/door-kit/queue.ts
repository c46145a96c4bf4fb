// Scans waiting to be uploaded, oldest first, each with the nonce it was decided under: an upload
// whose answer was lost is sent again with the same nonces, and the server answers the original
// results instead of counting the scans twice.
import type { UploadItem } from './client.js';

/** The most scans one upload carries (the batch route's limit). */
export const UPLOAD_BATCH = 500;

export class ScanQueue {
  private items: UploadItem[];

  constructor(items: UploadItem[] = []) {
    this.items = [...items];
  }

  get size(): number {
    return this.items.length;
  }

  push(item: UploadItem): void {
    this.items.push(item);
  }

  /** The oldest scans, at most one batch: still queued until `remove`. */
  head(max = UPLOAD_BATCH): UploadItem[] {
    return this.items.slice(0, Math.min(max, UPLOAD_BATCH));
  }

  remove(nonces: ReadonlySet<string>): void {
    this.items = this.items.filter((i) => !nonces.has(i.nonce));
  }

  toJSON(): UploadItem[] {
    return this.items;
  }
}
