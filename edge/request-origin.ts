// Where a request came in, as a client would address this server: the Host header when it looks
// like one (it is echoed into documents, so anything else is replaced), and `https` when a proxy
// in front says so.

/** The Host header when it looks like one, else `localhost`. */
export function hostOf(headers: Readonly<Record<string, string>>): string {
  const h = headers.host ?? '';
  return /^[A-Za-z0-9.-]+(:[0-9]{1,5})?$|^\[[0-9A-Fa-f:.]+\](:[0-9]{1,5})?$/.test(h) ? h : 'localhost';
}

/** `https` when a proxy in front says so. */
export function secure(headers: Readonly<Record<string, string>>): boolean {
  return (headers['x-forwarded-proto'] ?? '').split(',')[0].trim() === 'https';
}

/** `http(s)://host[:port]` of the request. */
export function requestOrigin(headers: Readonly<Record<string, string>>): string {
  return `${secure(headers) ? 'https' : 'http'}://${hostOf(headers)}`;
}
