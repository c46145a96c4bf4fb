// The door view's script (plain browser JavaScript, no build step). It keeps one stream open:
// fetch() with the orgid and bearer headers, the body read as Server-Sent Events by hand. Each
// `door` event is a whole snapshot, so the page just draws the latest. A stream that ends or fails
// is opened again after a pause that grows; one refused for its credentials (401, 403) waits for
// new ones. Credentials live under the reference page's storage keys (`ref.base`, `ref.orgid`,
// `ref.token`, edge/reference/page-script.ts).
export const DOOR_SCRIPT = String.raw`
(() => {
  const $ = (id) => document.getElementById(id);
  const SVG = 'http://www.w3.org/2000/svg';
  const el = (tag, props, ...kids) => {
    const n = document.createElement(tag);
    for (const [k, v] of Object.entries(props || {})) {
      if (v === undefined || v === null) continue;
      if (k === 'class') n.className = v;
      else if (k === 'text') n.textContent = v;
      else n.setAttribute(k, v);
    }
    for (const c of kids) if (c !== undefined && c !== null) n.append(c);
    return n;
  };
  const svg = (tag, attrs) => {
    const n = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs || {})) n.setAttribute(k, String(v));
    return n;
  };
  const fmt = (n) => Number(n).toLocaleString('en');

  // /events/<id>/door
  const parts = location.pathname.split('/');
  const eventId = decodeURIComponent(parts[parts.length - 2] || '');

  // ---- credentials, shared with the reference page
  for (const id of ['base', 'orgid', 'token']) {
    $(id).value = localStorage.getItem('ref.' + id) || (id === 'base' ? location.origin : '');
  }
  const creds = $('creds');
  const signedIn = () => Boolean($('orgid').value.trim() && $('token').value.trim());
  const label = () => { creds.querySelector('summary').textContent = signedIn() ? 'Credentials' : 'Sign in'; };
  if (!signedIn()) creds.open = true;
  label();
  $('signin').addEventListener('submit', (e) => {
    e.preventDefault();
    for (const id of ['base', 'orgid', 'token']) localStorage.setItem('ref.' + id, $(id).value.trim());
    creds.open = false;
    label();
    connect();
  });
  // Signed in on the reference page in another tab: use it.
  window.addEventListener('storage', (e) => {
    if (!e.key || !e.key.startsWith('ref.')) return;
    const id = e.key.slice(4);
    if ($(id)) $(id).value = e.newValue || '';
    label();
    if (id === 'orgid' || id === 'token') connect();
  });

  const status = (state, text) => {
    const s = $('status');
    s.dataset.state = state;
    s.textContent = text;
  };

  // ---- the stream
  let ctrl = null;
  let retryMs = 1000;
  let retryTimer = null;
  let last = null;

  function connect() {
    if (ctrl) ctrl.abort();
    clearTimeout(retryTimer);
    const base = ($('base').value.trim() || location.origin).replace(/\/+$/, '');
    const orgid = $('orgid').value.trim();
    const token = $('token').value.trim();
    if (!orgid || !token) {
      status('idle', 'Sign in to connect');
      creds.open = true;
      return;
    }
    const mine = (ctrl = new AbortController());
    status('connecting', 'Connecting…');
    read(base, orgid, token, mine).then(
      (why) => {
        if (mine !== ctrl) return;
        if (why === 'token_expired') {
          status('error', 'The token expired: sign in again');
          creds.open = true;
          return;
        }
        again();
      },
      (err) => {
        if (mine !== ctrl || mine.signal.aborted) return;
        if (err && err.fatal) {
          status('error', err.message);
          creds.open = true;
          return;
        }
        again();
      },
    );
  }

  function again() {
    status('connecting', 'Reconnecting in ' + Math.round(retryMs / 1000) + ' s…');
    retryTimer = setTimeout(connect, retryMs);
    retryMs = Math.min(retryMs * 2, 30000);
  }

  async function read(base, orgid, token, mine) {
    const res = await fetch(base + '/events/' + encodeURIComponent(eventId) + '/door/stream', {
      headers: { orgid, authorization: 'Bearer ' + token, accept: 'text/event-stream' },
      signal: mine.signal,
      cache: 'no-store',
    });
    if (!res.ok) {
      let message = res.status + ' ' + res.statusText;
      try { const b = await res.json(); if (b && b.message) message = res.status + ': ' + [].concat(b.message).join('; '); } catch (e) { /* not JSON */ }
      const err = new Error(message);
      // Credentials or the event are wrong: retrying will not help.
      err.fatal = res.status === 401 || res.status === 403 || res.status === 404 || res.status === 400;
      throw err;
    }
    status('live', 'Live');
    retryMs = 1000;
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    let buf = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return 'ended';
      buf += value;
      let cut;
      while ((cut = buf.indexOf('\n\n')) >= 0) {
        const block = buf.slice(0, cut);
        buf = buf.slice(cut + 2);
        let event = 'message';
        const data = [];
        for (const line of block.split('\n')) {
          if (line.startsWith(':')) continue;
          const i = line.indexOf(':');
          const field = i < 0 ? line : line.slice(0, i);
          const v = i < 0 ? '' : line.slice(i + 1).replace(/^ /, '');
          if (field === 'event') event = v;
          else if (field === 'data') data.push(v);
        }
        if (!data.length) continue;
        const payload = JSON.parse(data.join('\n'));
        if (event === 'door') draw(payload);
        else if (event === 'end') return payload.reason;
      }
    }
  }

  // ---- drawing
  function tiles(s) {
    const t = $('tiles');
    t.replaceChildren();
    const tile = (name, key, value, tone) =>
      t.append(el('div', { class: 'tile' + (tone ? ' ' + tone : ''), 'data-tile': key }, el('span', { class: 'n', text: fmt(value) }), el('span', { class: 'label', text: name })));
    tile('Inside', 'inside', s.inside);
    tile('Admitted', 'admitted', s.admitted);
    tile('Denied', 'denied', s.denied, s.denied ? 'warn' : '');
    tile('Conflicts', 'conflicts', s.conflicts, s.conflicts ? 'bad' : '');
    tile('Check-outs', 'checkouts', s.checkouts);
  }

  function zones(list) {
    const box = $('zones');
    box.replaceChildren();
    if (!list.length) { box.append(el('p', { class: 'muted', text: 'The event has no zones.' })); return; }
    for (const z of list) {
      const pct = z.capacity === null ? null : z.capacity === 0 ? 100 : Math.min(100, (z.inside / z.capacity) * 100);
      const tone = pct === null ? 'open' : pct >= 95 ? 'bad' : pct >= 80 ? 'warn' : 'ok';
      const count = z.capacity === null ? fmt(z.inside) + ' inside' : fmt(z.inside) + ' / ' + fmt(z.capacity);
      const bar = el('div', { class: 'bar ' + tone, role: 'meter', 'aria-valuemin': '0', 'aria-valuemax': String(z.capacity ?? z.inside), 'aria-valuenow': String(z.inside), 'aria-label': z.zoneName });
      const fill = el('span');
      fill.style.width = (pct === null ? 0 : pct) + '%';
      // One person in a hall of 500 still shows.
      if (z.inside > 0) fill.style.minWidth = '4px';
      bar.append(fill);
      box.append(el('div', { class: 'zone', 'data-zone': z.zoneId, 'data-inside': String(z.inside) },
        el('div', { class: 'row' }, el('span', { class: 'name', text: z.zoneName }), el('span', { class: 'count', text: count })),
        bar,
        el('div', { class: 'muted small', text: z.capacity === null ? 'no capacity set' : (z.percentFull ?? 0) + '% full' })));
    }
  }

  function rate(r) {
    const box = $('rate');
    box.replaceChildren();
    if (!r.checkpoints.length) { box.append(el('p', { class: 'muted', text: 'No scans in the last hour.' })); return; }
    const from = new Date(r.from);
    const hhmm = (d) => d.toTimeString().slice(0, 5);
    const until = new Date(from.getTime() + (r.minutes - 1) * 60000);
    const W = 600, H = 90;
    for (const c of r.checkpoints) {
      const max = Math.max(1, ...c.perMinute);
      const now = c.perMinute[c.perMinute.length - 1];
      const g = svg('svg', { viewBox: '0 0 ' + W + ' ' + H, preserveAspectRatio: 'none', class: 'chart', role: 'img', 'aria-label': (c.checkpoint ?? 'no checkpoint') + ': ' + c.total + ' scans in the last hour' });
      g.append(svg('line', { x1: 0, y1: H - 0.5, x2: W, y2: H - 0.5, class: 'axis' }));
      g.append(svg('line', { x1: 0, y1: 0.5, x2: W, y2: 0.5, class: 'grid' }));
      const bw = W / r.minutes;
      c.perMinute.forEach((n, i) => {
        if (!n) return;
        const h = Math.max(2, (n / max) * (H - 4));
        const rect = svg('rect', { x: (i * bw + 0.5).toFixed(1), y: (H - h).toFixed(1), width: Math.max(1, bw - 1).toFixed(1), height: h.toFixed(1) });
        const tip = svg('title');
        tip.textContent = hhmm(new Date(from.getTime() + i * 60000)) + ': ' + n;
        rect.append(tip);
        g.append(rect);
      });
      box.append(el('figure', { class: 'checkpoint', 'data-checkpoint': c.checkpoint ?? '' },
        el('figcaption', {},
          el('span', { class: 'name', text: c.checkpoint ?? '(no checkpoint)' }),
          el('span', { class: 'muted', text: fmt(c.total) + ' in the hour · ' + fmt(now) + ' this minute · peak ' + fmt(max) + '/min' })),
        g,
        el('div', { class: 'axis-labels muted small' }, el('span', { text: hhmm(from) }), el('span', { text: hhmm(until) }))));
    }
  }

  function denials(d) {
    const box = $('denials');
    box.replaceChildren();
    const rows = Object.entries(d).filter(([, n]) => n > 0).sort((a, b) => b[1] - a[1]);
    if (!rows.length) { box.append(el('p', { class: 'muted', text: 'No denials.' })); return; }
    const max = rows[0][1];
    for (const [reason, n] of rows) {
      const bar = el('div', { class: 'bar warn thin' });
      const fill = el('span');
      fill.style.width = (n / max) * 100 + '%';
      bar.append(fill);
      box.append(el('div', { class: 'reason', 'data-reason': reason }, el('div', { class: 'row' }, el('code', { text: reason }), el('span', { class: 'count', text: fmt(n) })), bar));
    }
  }

  function ago(iso) {
    if (!iso) return 'not seen';
    const s = Math.max(0, Math.round((Date.now() - Date.parse(iso)) / 1000));
    if (s < 60) return s + ' s ago';
    if (s < 3600) return Math.round(s / 60) + ' min ago';
    if (s < 86400) return Math.round(s / 3600) + ' h ago';
    return new Date(iso).toLocaleDateString();
  }

  function devices(list) {
    const box = $('devices');
    box.replaceChildren();
    if (!list.length) { box.append(el('p', { class: 'muted', text: 'No devices seen.' })); return; }
    const ul = el('ul', { class: 'devices' });
    for (const d of list) {
      ul.append(el('li', { 'data-device': d.id },
        el('div', { class: 'row' }, el('span', { class: 'name', text: d.name }), el('span', { class: 'muted small', text: d.enrolled ? ago(d.lastSeenAt) : 'not enrolled' })),
        el('div', { class: 'muted small', text: fmt(d.entries) + ' entries here' + (d.scanCount === null ? '' : ' · ' + fmt(d.scanCount) + ' scans in all') })));
    }
    box.append(ul);
  }

  function draw(s) {
    last = s;
    $('event-name').textContent = s.eventName || s.eventId;
    document.title = 'Door · ' + (s.eventName || s.eventId);
    tiles(s);
    zones(s.zones);
    rate(s.rate);
    denials(s.denials);
    devices(s.devices);
    $('asof').textContent = 'As of ' + new Date(s.at).toLocaleTimeString() + ' · ' + fmt(s.scans) + ' check-in scans in all';
    $('view').dataset.at = s.at;
  }

  // "12 s ago" moves on between snapshots.
  setInterval(() => { if (last) devices(last.devices); }, 5000);
  connect();
})();
`;
