// Helpers for the chat tests: real socket.io-client connections to a real node, tokens, records.
import { io, type Socket } from 'socket.io-client';
import { newId } from '../../core/ids.js';
import { newRecord } from '../../core/store/record.js';
import { WriteBatch } from '../../core/store/store.js';
import type { RunningApp } from '../../edge/app.js';
import { tokenFor } from '../helpers/app.js';

interface Teardown {
  teardown(fn: () => unknown): void;
}

export interface Person {
  id: string;
  email: string;
  token: string;
}

export function agent(app: RunningApp, org: string, name = 'agent', roles: string[] = ['User']): Person {
  const id = newId();
  const email = `${name}-${id.slice(-6)}@staff.example.com`;
  return { id, email, token: tokenFor(app, { org, kind: 'staff', roles, sub: id, email }) };
}

/** A customer with a `customer` record (so direct messages can be sent to them). */
export async function customer(app: RunningApp, org: string, name = 'customer'): Promise<Person> {
  const id = newId();
  const email = `${name}-${id.slice(-6)}@example.com`;
  await app.deps.store.commit(new WriteBatch().putRecord(newRecord(org, 'customer', { email, name }, { sk: id }), 0));
  return { id, email, token: tokenFor(app, { org, kind: 'customer', roles: [], sub: id, email, customerId: id }) };
}

export function socketTo(t: Teardown, app: RunningApp, nsp: '/chat' | '/community-chat', auth: Record<string, unknown>): Socket {
  const s = io(app.url + nsp, { transports: ['websocket'], forceNew: true, reconnection: false, auth });
  t.teardown(() => {
    s.disconnect();
  });
  return s;
}

export function once<T = any>(s: Socket, ev: string, ms = 5000): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      s.off(ev, on);
      reject(new Error(`no ${ev} within ${ms} ms`));
    }, ms);
    const on = (data: T) => {
      clearTimeout(timer);
      resolve(data);
    };
    s.once(ev, on);
  });
}

/** Resolves with the first `ev` whose payload passes `pred`. */
export function until<T = any>(s: Socket, ev: string, pred: (d: T) => boolean, ms = 5000): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      s.off(ev, on);
      reject(new Error(`no matching ${ev} within ${ms} ms`));
    }, ms);
    const on = (data: T) => {
      if (!pred(data)) return;
      clearTimeout(timer);
      s.off(ev, on);
      resolve(data);
    };
    s.on(ev, on);
  });
}

/** Collects every `ev` from now on. */
export function collect<T = any>(s: Socket, ev: string): T[] {
  const out: T[] = [];
  s.on(ev, (d: T) => out.push(d));
  return out;
}

export function ack<T = any>(s: Socket, ev: string, payload?: unknown, ms = 5000): Promise<T> {
  return s.timeout(ms).emitWithAck(ev, payload) as Promise<T>;
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Connects to /chat and waits for `authenticate`. */
export async function chatSocket(t: Teardown, app: RunningApp, org: string, who: Person, extra: Record<string, unknown> = {}) {
  const s = socketTo(t, app, '/chat', { token: who.token, orgId: org, ...extra });
  // Replayed messages follow authenticate at once: listen from the start.
  const messages = collect(s, 'message');
  const auth = await once(s, 'authenticate');
  return { s, auth, messages };
}

export async function communitySocket(t: Teardown, app: RunningApp, org: string, who: Person, extra: Record<string, unknown> = {}) {
  const s = socketTo(t, app, '/community-chat', { token: who.token, orgId: org, ...extra });
  await once(s, 'connect');
  return s;
}

/** Waits until `check` passes (polling), for conditions reached through async fan-out. */
export async function eventually(check: () => boolean | Promise<boolean>, ms = 5000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`${what} not reached within ${ms} ms`);
    await sleep(20);
  }
}
