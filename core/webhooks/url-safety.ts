// Where a webhook may be sent. Only https URLs, and only to public addresses: every address the
// host resolves to is checked (a name with one private address among public ones is refused, as
// DNS answers may rotate), at create time and again at each delivery, whose connection goes to
// the address checked, never to a second resolution (DNS rebinding). Hosts named in
// WEBHOOK_ALLOW_HOSTS skip both rules (local development and tests point at loopback).
import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';
import { appError } from '../errors.js';

const blocked = new BlockList();
for (const [net, bits] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 3],
] as const) {
  blocked.addSubnet(net, bits, 'ipv4');
}
for (const [net, bits] of [
  ['::', 128],
  ['::1', 128],
  ['64:ff9b::', 96],
  ['100::', 64],
  ['2001:db8::', 32],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
] as const) {
  blocked.addSubnet(net, bits, 'ipv6');
}

/** Whether `address` is private, loopback, link-local, reserved or multicast. */
export function isPrivateAddress(address: string): boolean {
  const v = isIP(address);
  if (v === 4) return blocked.check(address, 'ipv4');
  if (v !== 6) return true;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return blocked.check(mapped[1], 'ipv4');
  return blocked.check(address, 'ipv6');
}

export interface UrlPolicy {
  /** Host names (lower case) that may use http and private addresses. */
  allowHosts: readonly string[];
}

/** The URL's host without IPv6 brackets, lower case. */
export function hostOf(url: URL): string {
  const h = url.hostname.toLowerCase();
  return h.startsWith('[') && h.endsWith(']') ? h.slice(1, -1) : h;
}

/** The URL with its credentials (user, password) and query replaced: what logs may show. */
export function redactUrl(raw: string): string {
  try {
    const u = new URL(raw);
    const cred = u.username || u.password ? '***@' : '';
    return `${u.protocol}//${cred}${u.host}${u.pathname}${u.search ? '?***' : ''}`;
  } catch {
    return '(invalid url)';
  }
}

/** Parses and checks the URL's form (400 when refused); no resolution. */
export function checkUrlForm(raw: string, policy: UrlPolicy): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw appError('ERR_VALIDATION', 'body/url is not a valid absolute URL');
  }
  const allowed = policy.allowHosts.includes(hostOf(url));
  if (url.protocol !== 'https:' && !(allowed && url.protocol === 'http:')) throw appError('ERR_VALIDATION', 'body/url must be an https:// URL');
  if (url.hash) throw appError('ERR_VALIDATION', 'body/url must not carry a #fragment');
  return url;
}

export interface Resolved {
  address: string;
  family: 4 | 6;
}

/**
 * Resolves the URL's host and checks every address; answers the address to connect to. Throws a
 * 400 AppError when an address is private (and the host not allowed) or the name does not resolve.
 */
export async function resolveChecked(url: URL, policy: UrlPolicy): Promise<Resolved> {
  const host = hostOf(url);
  const allowed = policy.allowHosts.includes(host);
  let addrs: Array<{ address: string; family: number }>;
  if (isIP(host)) addrs = [{ address: host, family: isIP(host) }];
  else {
    try {
      addrs = await lookup(host, { all: true, verbatim: true });
    } catch {
      throw appError('ERR_VALIDATION', `the host of body/url (${host}) does not resolve`);
    }
  }
  if (addrs.length === 0) throw appError('ERR_VALIDATION', `the host of body/url (${host}) does not resolve`);
  if (!allowed) {
    const bad = addrs.find((a) => isPrivateAddress(a.address));
    if (bad) throw appError('ERR_VALIDATION', `the host of body/url resolves to ${bad.address}, a private, loopback or link-local address: webhooks go to public addresses only`);
  }
  return { address: addrs[0].address, family: addrs[0].family === 6 ? 6 : 4 };
}
