// The kit's only way to the server: its public routes over `fetch` (injectable, so an app can
// add its own proxy, certificate pinning or a test double). A device token is sent as
// `Authorization: Device <token>` with the organisation's `orgid`.
import type { DoorKeys, FeedPage } from './types.js';

export type Fetch = (url: string, init: { method: string; headers: Record<string, string>; body?: string; signal?: AbortSignal }) => Promise<{
  status: number;
  text(): Promise<string>;
}>;

/**
 * The server cannot be reached: no answer at all, or a 502, 503 or 504 (a proxy whose server is
 * down, a server stopping). The kit keeps deciding offline and tries again later.
 */
export class KitOfflineError extends Error {
  constructor(
    cause: unknown,
    readonly status?: number,
  ) {
    super(`the server could not be reached: ${cause instanceof Error ? cause.message : String(cause)}`);
    this.name = 'KitOfflineError';
  }
}

/** Answers that say the service is not there right now, not that the request was wrong. */
const UNAVAILABLE = new Set([502, 503, 504]);

/** The server answered with an error (the spec's envelope `{statusCode, message, error}` in `body`). */
export class KitHttpError extends Error {
  constructor(
    readonly status: number,
    readonly body: unknown,
  ) {
    const msg = body && typeof body === 'object' && 'message' in body ? String((body as { message: unknown }).message) : '';
    super(`the server answered ${status}${msg ? `: ${msg}` : ''}`);
    this.name = 'KitHttpError';
  }
}

export interface Initialized {
  deviceId: string;
  token: string;
  device: { sk: string; eventIds: string[] | null; listId: string | null; checkpoint: string | null; name: string };
}

export interface UploadItem {
  code: string;
  eventId: string;
  listId?: string;
  zone?: string;
  checkpoint?: string;
  nonce: string;
  scannedAt: string;
  offline: true;
  decision: 'admitted' | 'denied';
  reason?: string;
}

export type UploadResult =
  | { success: boolean; offline?: true; ticketId?: string; conflict?: true; conflictReason?: string; reason?: string; ticket?: { sk: string } }
  | { success: false; error: { statusCode: number; error: string; message: string } };

export interface ClientOptions {
  baseUrl: string;
  orgId: string;
  fetch?: Fetch;
  /** A request with no answer after this long counts as offline (default 10 s). */
  timeoutMs?: number;
}

export class DoorClient {
  private readonly base: string;
  private readonly fetch: Fetch;
  token: string | undefined;

  constructor(private readonly opts: ClientOptions) {
    this.base = opts.baseUrl.replace(/\/+$/, '');
    this.fetch = opts.fetch ?? ((url, init) => globalThis.fetch(url, init));
  }

  private async call<T>(method: string, path: string, body?: unknown): Promise<T> {
    const headers: Record<string, string> = { orgid: this.opts.orgId, accept: 'application/json' };
    if (this.token) headers.authorization = `Device ${this.token}`;
    if (body !== undefined) headers['content-type'] = 'application/json';
    let status: number;
    let text: string;
    try {
      const res = await this.fetch(this.base + path, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(this.opts.timeoutMs ?? 10_000),
      });
      status = res.status;
      text = await res.text();
    } catch (err) {
      throw new KitOfflineError(err);
    }
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = text;
    }
    if (UNAVAILABLE.has(status)) throw new KitOfflineError(new KitHttpError(status, parsed), status);
    if (status < 200 || status >= 300) throw new KitHttpError(status, parsed);
    return parsed as T;
  }

  initialize(initToken: string, hardwareId?: string): Promise<Initialized> {
    return this.call('POST', '/events/devices/initialize', hardwareId === undefined ? { initToken } : { initToken, hardwareId });
  }

  doorKeys(eventId: string): Promise<DoorKeys> {
    return this.call('GET', `/events/${encodeURIComponent(eventId)}/door-keys`);
  }

  doorFeed(eventId: string, since: string | null, limit: number): Promise<FeedPage> {
    const q = new URLSearchParams({ limit: String(limit) });
    if (since !== null) q.set('since', since);
    return this.call('GET', `/events/${encodeURIComponent(eventId)}/door-feed?${q}`);
  }

  uploadBatch(items: UploadItem[]): Promise<{ results: UploadResult[] }> {
    return this.call('POST', '/events/checkin/batch', { scans: items });
  }
}
