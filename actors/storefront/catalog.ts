// Products and POS categories as the storefront lists them (reads: straight from the store).
// A product's availability at a location comes from its `bm_location_product` record there
// (`data.productId`, `data.businessLocationId`, `data.available` or `isAvailable`, optional
// `price` and `stock`); without one the product's own `data.available` applies (absent: true).
import type { ListResult, StoredRecord } from '../../core/store/record.js';
import type { Store } from '../../core/store/store.js';
import { BM_LOCATION_PRODUCT, SF_CATEGORY, SF_PRODUCT } from './order.js';

export interface Availability {
  businessLocationId: string;
  available: boolean;
  /** The location's price, when it sets one. */
  price?: unknown;
  stock?: unknown;
  /** Whether a bm_location_product record speaks for this location. */
  configured: boolean;
}

export interface ProductQuery {
  businessLocationId?: string;
  categoryId?: string;
  q?: string;
  availableOnly?: boolean;
  page?: number;
  pageSize?: number;
}

function page<T>(all: T[], pageNo: number | undefined, size: number | undefined, limits: { defaultPageSize: number; maxPageSize: number }): ListResult<T> {
  const pageSize = Math.min(size ?? limits.defaultPageSize, limits.maxPageSize);
  const p = pageNo ?? 1;
  const data = all.slice((p - 1) * pageSize, p * pageSize);
  return { data, total: all.length, hasNext: p * pageSize < all.length, page: p, pageSize };
}

function flag(v: unknown): boolean | undefined {
  if (v === true || v === 'true') return true;
  if (v === false || v === 'false') return false;
  return undefined;
}

function sortKey(v: unknown): number {
  const n = typeof v === 'number' ? v : typeof v === 'string' && v.trim() ? Number(v) : NaN;
  return Number.isFinite(n) ? n : Number.MAX_SAFE_INTEGER;
}

function nameOf(r: StoredRecord): string {
  return String(r.data.name ?? r.data.title ?? '');
}

export function listProducts(
  store: Store,
  tenant: string,
  q: ProductQuery,
  limits: { defaultPageSize: number; maxPageSize: number },
): ListResult<StoredRecord & { availability?: Availability }> {
  let products = store.scan(tenant, SF_PRODUCT, q.categoryId ? { 'data.categoryId': q.categoryId } : undefined);
  if (q.q) {
    const needle = q.q.toLowerCase();
    products = products.filter((p) => nameOf(p).toLowerCase().includes(needle) || String(p.data.sku ?? '').toLowerCase() === needle);
  }
  let out: Array<StoredRecord & { availability?: Availability }> = products;
  if (q.businessLocationId) {
    const slug = q.businessLocationId;
    const byProduct = new Map<string, StoredRecord>();
    for (const r of store.scan(tenant, BM_LOCATION_PRODUCT, { 'data.businessLocationId': slug })) {
      if (typeof r.data.productId === 'string') byProduct.set(r.data.productId, r);
    }
    out = products.map((p) => {
      const at = byProduct.get(p.sk);
      const availability: Availability = at
        ? {
            businessLocationId: slug,
            available: flag(at.data.available) ?? flag(at.data.isAvailable) ?? true,
            configured: true,
            ...(at.data.price !== undefined ? { price: at.data.price } : {}),
            ...(at.data.stock !== undefined ? { stock: at.data.stock } : {}),
          }
        : { businessLocationId: slug, available: flag(p.data.available) ?? true, configured: false };
      return { ...p, availability };
    });
    if (q.availableOnly) out = out.filter((p) => p.availability!.available);
  } else if (q.availableOnly) {
    out = out.filter((p) => flag(p.data.available) !== false);
  }
  out.sort((a, b) => nameOf(a).localeCompare(nameOf(b)) || (a.sk < b.sk ? -1 : 1));
  return page(out, q.page, q.pageSize, limits);
}

/** Categories shown on the POS: `showInPos` not false, for the location (or every location), in `sortOrder`. */
export function listPosCategories(
  store: Store,
  tenant: string,
  q: { businessLocationId?: string; page?: number; pageSize?: number },
  limits: { defaultPageSize: number; maxPageSize: number },
): ListResult<StoredRecord> {
  const all = store
    .scan(tenant, SF_CATEGORY)
    .filter((c) => flag(c.data.showInPos) !== false)
    .filter((c) => !q.businessLocationId || c.data.businessLocationId === undefined || c.data.businessLocationId === null || c.data.businessLocationId === q.businessLocationId)
    .sort((a, b) => {
      const sa = sortKey(a.data.sortOrder);
      const sb = sortKey(b.data.sortOrder);
      return (sa - sb) || nameOf(a).localeCompare(nameOf(b)) || (a.sk < b.sk ? -1 : 1);
    });
  return page(all, q.page, q.pageSize, limits);
}
