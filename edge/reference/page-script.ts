// The reference page's script (plain browser JavaScript, no build step). Views by fragment:
// #/ (the guide), #/section/<slug>, #/op/<METHOD><path>, #/channels. The runner prefills every
// request with the operation's example and remembers ids: once an answer gives the live id for an
// example's placeholder (the hand-written examples share one story), later examples use it. The
// search waits for typing to pause, sends one request, and drops any answer older than the query
// on screen. An optional body field naming a story record no answer has given yet (the example's
// made-up `eventId`, `listId`) is left out of the prefilled body: sent, it would name nothing.
import { IDS } from './examples.js';

/** The story's record ids (24 hex characters): placeholders until an answer gives the live one. */
const STORY_IDS = Object.values(IDS).filter((v) => /^[0-9a-f]{24}$/.test(v));

export const PAGE_SCRIPT = String.raw`
(() => {
  const $ = (id) => document.getElementById(id);
  const el = (tag, props, ...kids) => {
    const n = document.createElement(tag);
    for (const [k, v] of Object.entries(props || {})) {
      if (v === undefined || v === null) continue;
      if (k === 'class') n.className = v;
      else if (k === 'text') n.textContent = v;
      else if (k.startsWith('on')) n.addEventListener(k.slice(2), v);
      else n.setAttribute(k, v);
    }
    for (const c of kids) if (c !== undefined && c !== null) n.append(c);
    return n;
  };
  const content = $('content');

  // ---- credentials and the id memory, kept across operations and reloads
  for (const id of ['base', 'orgid', 'token']) {
    $(id).value = localStorage.getItem('ref.' + id) || (id === 'base' ? location.origin : '');
    $(id).addEventListener('change', () => localStorage.setItem('ref.' + id, $(id).value));
  }
  const setField = (id, v) => { $(id).value = v; localStorage.setItem('ref.' + id, v); };
  let memory = {};
  try { memory = JSON.parse(sessionStorage.getItem('ref.memory') || '{}'); } catch (e) { memory = {}; }
  const ISO = /^\d{4}-\d{2}-\d{2}T/;
  function learn(example, actual) {
    if (typeof example === 'string' && typeof actual === 'string') {
      if (example !== actual && example.length >= 6 && !ISO.test(example)) memory[example] = actual;
    } else if (Array.isArray(example) && Array.isArray(actual)) {
      example.forEach((v, i) => learn(v, actual[i]));
    } else if (example && actual && typeof example === 'object' && typeof actual === 'object') {
      for (const k of Object.keys(example)) learn(example[k], actual[k]);
    }
  }
  function remember() { sessionStorage.setItem('ref.memory', JSON.stringify(memory)); }
  const STORY_IDS = new Set(${JSON.stringify(STORY_IDS)});
  // An example body with the ids learnt so far; an optional field still naming a story record
  // no answer gave (a made-up event or list) is left out.
  function prefill(example, schema) {
    const v = recall(example);
    if (!v || typeof v !== 'object' || Array.isArray(v)) return v;
    const required = new Set((schema && schema.required) || []);
    for (const k of Object.keys(v)) if (!required.has(k) && typeof v[k] === 'string' && STORY_IDS.has(v[k])) delete v[k];
    return v;
  }
  function recall(v) {
    if (typeof v === 'string') return Object.prototype.hasOwnProperty.call(memory, v) ? memory[v] : v;
    if (Array.isArray(v)) return v.map(recall);
    if (v && typeof v === 'object') { const o = {}; for (const k of Object.keys(v)) o[k] = recall(v[k]); return o; }
    return v;
  }

  // ---- Markdown, as elements (never innerHTML)
  function inline(text) {
    const out = document.createDocumentFragment();
    const re = /(\x60[^\x60]+\x60)|(\*\*[^*]+\*\*)|(\[[^\]]+\]\([^)\s]+\))|(\*[^*\s][^*]*\*)/g;
    let last = 0, m;
    while ((m = re.exec(text))) {
      if (m.index > last) out.append(text.slice(last, m.index));
      const t = m[0];
      if (m[1]) out.append(el('code', { text: t.slice(1, -1) }));
      else if (m[2]) out.append(el('strong', {}, inline(t.slice(2, -2))));
      else if (m[3]) {
        const i = t.indexOf('](');
        const href = t.slice(i + 2, -1);
        const safe = /^(\/|#|https?:)/.test(href) ? href : '#/';
        out.append(el('a', { href: safe }, inline(t.slice(1, i))));
      } else out.append(el('em', {}, inline(t.slice(1, -1))));
      last = m.index + t.length;
    }
    if (last < text.length) out.append(text.slice(last));
    return out;
  }
  function markdown(src) {
    const out = document.createDocumentFragment();
    const lines = String(src || '').split('\n');
    let i = 0;
    while (i < lines.length) {
      const line = lines[i];
      if (!line.trim()) { i++; continue; }
      if (line.startsWith('\x60\x60\x60')) {
        const body = [];
        for (i++; i < lines.length && !lines[i].startsWith('\x60\x60\x60'); i++) body.push(lines[i]);
        i++;
        out.append(el('pre', {}, el('code', { text: body.join('\n') })));
        continue;
      }
      const h = /^(#{1,4})\s+(.*)$/.exec(line);
      if (h) {
        const level = Math.min(4, h[1].length + 1);
        out.append(el('h' + level, { id: 'g-' + h[2].toLowerCase().replace(/[^a-z0-9]+/g, '-') }, inline(h[2])));
        i++;
        continue;
      }
      if (line.startsWith('|')) {
        const rows = [];
        for (; i < lines.length && lines[i].startsWith('|'); i++) rows.push(lines[i]);
        const cells = (r) => r.replace(/^\||\|$/g, '').split('|').map((c) => c.trim());
        const table = el('table');
        table.append(el('thead', {}, el('tr', {}, ...cells(rows[0]).map((c) => el('th', {}, inline(c))))));
        const tb = el('tbody');
        for (const r of rows.slice(2)) tb.append(el('tr', {}, ...cells(r).map((c) => el('td', {}, inline(c)))));
        table.append(tb);
        out.append(el('div', { class: 'scroll' }, table));
        continue;
      }
      const bullet = /^\s*(-|\d+\.)\s+/;
      if (bullet.test(line)) {
        const ordered = /^\s*\d+\./.test(line);
        const list = el(ordered ? 'ol' : 'ul');
        for (; i < lines.length && bullet.test(lines[i]); i++) list.append(el('li', {}, inline(lines[i].replace(bullet, ''))));
        out.append(list);
        continue;
      }
      const para = [];
      for (; i < lines.length && lines[i].trim() && !/^(#|\||\x60\x60\x60|\s*(-|\d+\.)\s)/.test(lines[i]); i++) para.push(lines[i]);
      out.append(el('p', {}, inline(para.join(' '))));
    }
    return out;
  }

  // ---- JSON schema as a field table
  function typeOf(s) {
    if (!s) return '';
    if (s.oneOf || s.anyOf) return (s.oneOf || s.anyOf).map(typeOf).filter(Boolean).join(' or ');
    if (s.const !== undefined) return JSON.stringify(s.const);
    if (s.enum) return s.enum.map((v) => JSON.stringify(v)).join(' | ');
    const t = Array.isArray(s.type) ? s.type.join(' or ') : s.type || (s.properties ? 'object' : 'any');
    if (t === 'array') return 'array of ' + (typeOf(s.items) || 'any');
    return t + (s.format ? ' (' + s.format + ')' : '');
  }
  function limitsOf(s) {
    const out = [];
    if (!s) return '';
    const alt = (s.oneOf || s.anyOf || []).find((x) => x.type !== 'null') || {};
    const v = Object.assign({}, alt, s);
    if (v.minLength !== undefined) out.push('min length ' + v.minLength);
    if (v.maxLength !== undefined) out.push('max length ' + v.maxLength);
    if (v.minimum !== undefined) out.push('≥ ' + v.minimum);
    if (v.maximum !== undefined) out.push('≤ ' + v.maximum);
    if (v.minItems !== undefined) out.push('min items ' + v.minItems);
    if (v.maxItems !== undefined) out.push('max items ' + v.maxItems);
    if (v.pattern) out.push('pattern ' + v.pattern);
    if (v.default !== undefined) out.push('default ' + JSON.stringify(v.default));
    return out.join('; ');
  }
  function rows(schema, prefix, required, depth, out) {
    if (!schema || depth > 4) return;
    const alt = (schema.anyOf || schema.oneOf || []).find((x) => x.properties || x.items);
    const s = schema.properties || schema.items ? schema : alt || schema;
    if (s.type === 'array' && s.items && (s.items.properties || s.items.anyOf)) return rows(s.items, prefix + '[]', true, depth + 1, out);
    const req = new Set(s.required || []);
    for (const [k, p] of Object.entries(s.properties || {})) {
      const name = prefix ? prefix + '.' + k : k;
      out.push({ name, type: typeOf(p), required: req.has(k), limits: limitsOf(p), description: p.description || '' });
      const inner = p.type === 'array' ? p.items : p;
      if (inner && (inner.properties && Object.keys(inner.properties).length || (inner.anyOf || inner.oneOf || []).some((x) => x.properties))) {
        rows(inner, name + (p.type === 'array' ? '[]' : ''), true, depth + 1, out);
      }
    }
  }
  function fieldTable(schema, caption) {
    const list = [];
    rows(schema, '', true, 0, list);
    if (!list.length) {
      if (!schema) return null;
      return el('p', { class: 'muted' }, caption ? caption + ': ' : '', el('code', { text: typeOf(schema) || 'JSON' }), schema.description ? inline(' — ' + schema.description) : '');
    }
    const tb = el('tbody');
    for (const r of list) tb.append(el('tr', {}, el('td', { class: 'name', text: r.name }), el('td', { 'data-label': 'Type', text: r.type }), el('td', { 'data-label': 'Required', text: r.required ? 'yes' : 'no' }), el('td', { 'data-label': 'Limits', text: r.limits }), el('td', {}, inline(r.description))));
    return el('div', { class: 'scroll' }, el('table', { class: 'fields' }, el('thead', {}, el('tr', {}, ...['Field', 'Type', 'Required', 'Limits', 'Description'].map((h) => el('th', { text: h })))), tb));
  }
  function paramTable(params) {
    if (!params.length) return null;
    const tb = el('tbody');
    for (const p of params) tb.append(el('tr', {}, el('td', { class: 'name', text: p.name }), el('td', { 'data-label': 'In', text: p.in }), el('td', { 'data-label': 'Type', text: typeOf(p.schema) }), el('td', { 'data-label': 'Required', text: p.required ? 'yes' : 'no' }), el('td', { 'data-label': 'Limits', text: limitsOf(p.schema) }), el('td', {}, inline(p.description || ''))));
    return el('div', { class: 'scroll' }, el('table', { class: 'fields' }, el('thead', {}, el('tr', {}, ...['Parameter', 'In', 'Type', 'Required', 'Limits', 'Description'].map((h) => el('th', { text: h })))), tb));
  }

  // ---- data, cached
  const cache = new Map();
  async function getJson(url) {
    if (!cache.has(url)) cache.set(url, fetch(url).then((r) => { if (!r.ok) throw new Error(url + ': ' + r.status); return r.json(); }));
    try { return await cache.get(url); } catch (e) { cache.delete(url); throw e; }
  }
  const opHref = (method, path) => '#/op/' + method + path;
  const opJson = (method, path) => getJson('/documentation/endpoint?format=json&method=' + method + '&path=' + encodeURIComponent(path));

  // ---- views
  let index = { sections: [] };
  function markNav(key) {
    for (const a of document.querySelectorAll('nav a')) a.classList.toggle('active', a.dataset.view === key);
  }
  function opList(eps, showSection) {
    const box = el('div', { class: 'oplist' });
    for (const e of eps) {
      box.append(el('a', { href: opHref(e.method, e.path), 'data-method': e.method, 'data-path': e.path },
        el('span', { class: 'method ' + e.method, text: e.method }), el('span', { class: 'path', text: e.path }),
        el('span', { class: 'summary' }, inline(e.summary || '')),
        showSection ? el('span', { class: 'where', text: e.tag }) : null));
    }
    return box;
  }

  function home() {
    markNav('home');
    document.title = 'Reference: getting started';
    const sandbox = el('div', { class: 'panel' },
      el('strong', { text: 'Try it here. ' }), 'Sign up a throwaway organisation: the orgid and token fields fill in, and every runner on this page uses them.',
      el('div', {}, el('button', { class: 'primary', id: 'sandbox', onclick: signUpSandbox, text: 'Sign up a sandbox organisation' })),
      el('div', { id: 'sandbox-result', class: 'muted' }));
    const cards = el('div', { class: 'cards' });
    for (const s of index.sections) cards.append(el('a', { href: '#/section/' + s.slug }, s.name, el('small', { text: s.count + (s.count === 1 ? ' endpoint' : ' endpoints') })));
    cards.prepend(el('a', { href: '#/channels' }, 'Socket channels', el('small', { text: '/chat and /community-chat' })));
    content.replaceChildren(el('h1', { text: 'Getting started' }), sandbox, markdown(JSON.parse($('guide').textContent)), el('h2', { text: 'Sections' }), cards);
  }

  async function signUpSandbox() {
    const out = $('sandbox-result');
    const tag = Math.random().toString(36).slice(2, 8);
    out.textContent = 'Signing up…';
    try {
      const res = await fetch($('base').value.replace(/\/$/, '') + '/profile/user/signup', {
        method: 'POST', headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: 'sandbox-' + tag + '@example.com', password: 'sandbox-' + tag + '-password', name: 'Sandbox user', orgName: 'Sandbox ' + tag }),
      });
      const body = await res.json();
      if (!res.ok || !body.token) { out.textContent = 'Sign-up answered ' + res.status + ': ' + (body.message || ''); return; }
      setField('orgid', body.orgId); setField('token', body.token);
      try {
        const op = await opJson('POST', '/profile/user/signup');
        const ok = Object.entries(op.operation.responses || {}).find(([s]) => s.startsWith('2'));
        const ex = ok && ok[1].content && ok[1].content['application/json'].examples;
        if (ex && ex.signUp) learn(ex.signUp.value, body);
        remember();
      } catch (e) { /* the ids are a convenience */ }
      out.replaceChildren('Signed up as ', el('code', { text: body.user && body.user.email }), ' in organisation ', el('code', { text: body.orgId }), '. Next: ', el('a', { href: opHref('POST', '/events'), text: 'create an event' }), '.');
    } catch (e) { out.textContent = 'Sign-up failed: ' + e.message; }
  }

  async function section(slug) {
    markNav('s:' + slug);
    const sec = await getJson('/documentation/tag/' + slug + '.json');
    document.title = 'Reference: ' + sec.name;
    const n = sec.endpoints.length;
    content.replaceChildren(el('h1', { text: sec.name }), el('p', { class: 'muted', text: n + (n === 1 ? ' endpoint' : ' endpoints') }), opList(sec.endpoints, false));
  }

  function examplesOf(media) {
    if (!media) return [];
    if (media.examples) return Object.entries(media.examples).map(([name, e]) => ({ name, summary: e.summary || name, value: e.value }));
    if (media.example !== undefined) return [{ name: 'example', summary: 'Example', value: media.example }];
    return [];
  }
  const pretty = (v) => typeof v === 'string' ? v : JSON.stringify(v, null, 2);

  async function operation(method, path) {
    const ep = await opJson(method, path);
    markNav('s:' + ep.section);
    document.title = 'Reference: ' + method + ' ' + path;
    const op = ep.operation || {};
    const params = op.parameters || [];
    const body = op.requestBody && op.requestBody.content && op.requestBody.content['application/json'];
    const okEntry = Object.entries(op.responses || {}).find(([s]) => /^2/.test(s));
    const okMedia = okEntry && okEntry[1].content ? (okEntry[1].content['application/json'] || Object.values(okEntry[1].content)[0]) : null;
    const reqExamples = examplesOf(body);
    const resExamples = examplesOf(okMedia);
    const view = el('article', { 'data-method': method, 'data-path': path });
    const docs = el('div', { class: 'docs' });
    const side = el('aside', { class: 'side' });
    view.append(el('div', { class: 'ophead' }, el('span', { class: 'method ' + method, text: method }), el('h2', { class: 'path', text: path })),
      el('p', {}, inline(ep.summary || '')),
      el('p', {}, el('span', { class: 'badge', text: 'Access: ' + ep.access }), ' ', el('a', { href: '#/section/' + ep.section, text: ep.tag })),
      el('div', { class: 'opgrid' }, docs, side));
    if (ep.description) docs.append(markdown(ep.description));
    const visible = params.filter((p) => p.in !== 'header');
    if (visible.length) docs.append(el('h3', { text: 'Parameters' }), paramTable(visible));
    if (params.some((p) => p.name === 'orgid')) docs.append(el('p', { class: 'muted' }, 'Send the ', el('code', { text: 'orgid' }), ' header: ', params.find((p) => p.name === 'orgid').required ? 'required.' : 'optional.'));
    if (body) docs.append(el('h3', { text: 'Request body' }), fieldTable(body.schema, 'Body'));
    docs.append(el('h3', { text: 'Answer ' + (okEntry ? okEntry[0] : '') }));
    if (okEntry && okEntry[1].description) docs.append(markdown(okEntry[1].description));
    if (okMedia) docs.append(fieldTable(okMedia.schema, 'Answer'));
    if (ep.errors && ep.errors.length) {
      const tb = el('tbody');
      for (const e of ep.errors) tb.append(el('tr', {}, el('td', { text: String(e.status) }), el('td', {}, inline(e.meaning))));
      docs.append(el('h3', { text: 'Errors' }), el('div', { class: 'scroll' }, el('table', {}, el('thead', {}, el('tr', {}, el('th', { text: 'Status' }), el('th', { text: 'When' }))), tb)));
    }
    // Beside the text on a wide screen (below it on a narrow one): try it, then the examples.
    side.append(runner(ep, params, body, reqExamples, resExamples));
    for (const ex of reqExamples) side.append(el('p', { class: 'muted', text: 'Request example: ' + ex.summary }), el('pre', { class: 'example' }, el('code', { text: pretty(ex.value) })));
    for (const ex of resExamples) side.append(el('p', { class: 'muted', text: 'Answer example: ' + ex.summary }), el('pre', { class: 'example' }, el('code', { text: pretty(ex.value) })));
    content.replaceChildren(view);
  }

  function runner(ep, params, body, reqExamples, resExamples) {
    const box = el('div', { class: 'panel runner' }, el('h3', { text: 'Try it' }),
      el('p', { class: 'muted hint', text: 'Sends the orgid and bearer token from Credentials; ids from earlier answers fill in the example.' }));
    const inputs = {};
    for (const p of params.filter((p) => p.in === 'path' || p.in === 'query')) {
      const prefill = p.in === 'path' || p.required ? recall(p.example) : undefined;
      const input = el('input', { 'data-param': p.name, placeholder: p.example !== undefined ? 'e.g. ' + p.example : p.in });
      if (prefill !== undefined) input.value = String(prefill);
      inputs[p.in + ':' + p.name] = input;
      box.append(el('label', { text: p.name + ' (' + p.in + (p.required ? ', required' : '') + ')' }), input);
    }
    let text;
    if (body) {
      text = el('textarea', { 'aria-label': 'JSON body', spellcheck: 'false' });
      const first = reqExamples[0];
      text.value = first ? JSON.stringify(prefill(first.value, body.schema), null, 2) : '{}';
      box.append(el('label', { text: 'Body (JSON)' }), text);
      if (reqExamples.length > 1) {
        const pick = el('div');
        for (const ex of reqExamples) pick.append(el('button', { class: 'ghost', type: 'button', text: ex.summary, onclick: () => { text.value = JSON.stringify(prefill(ex.value, body.schema), null, 2); } }));
        box.append(pick);
      }
    }
    const out = el('div', { class: 'result' });
    const learnFrom = resExamples.filter((e) => e.name !== 'generated');
    const send = el('button', { class: 'send', text: 'Send request', onclick: async () => {
      let path = ep.path;
      for (const p of params.filter((p) => p.in === 'path')) path = path.replace(':' + p.name, encodeURIComponent(inputs['path:' + p.name].value));
      const qs = new URLSearchParams();
      for (const p of params.filter((p) => p.in === 'query')) if (inputs['query:' + p.name].value) qs.set(p.name, inputs['query:' + p.name].value);
      const headers = {};
      if ($('orgid').value && params.some((p) => p.name === 'orgid')) headers.orgid = $('orgid').value;
      const open = (ep.operation.security || []).some((s) => Object.keys(s).length === 0);
      if ($('token').value && !open) headers.authorization = 'Bearer ' + $('token').value;
      const init = { method: ep.method, headers };
      if (text) { headers['content-type'] = 'application/json'; init.body = text.value; }
      out.replaceChildren(el('p', { class: 'muted', text: 'Sending…' }));
      const t0 = performance.now();
      try {
        const qstr = qs.toString();
        const res = await fetch($('base').value.replace(/\/$/, '') + path + (qstr ? '?' + qstr : ''), init);
        const raw = await res.text();
        const ms = Math.round(performance.now() - t0);
        let shown = raw, parsed;
        try { parsed = JSON.parse(raw); shown = JSON.stringify(parsed, null, 2); } catch (e) { /* not JSON */ }
        if (res.ok && parsed) {
          for (const ex of learnFrom) learn(ex.value, parsed);
          if (parsed.token && parsed.orgId) { setField('token', parsed.token); setField('orgid', parsed.orgId); }
          remember();
        }
        const hdrs = [...res.headers.entries()].map(([k, v]) => k + ': ' + v).join('\n');
        out.replaceChildren(
          el('div', { class: 'status ' + (res.ok ? 'ok' : 'bad'), 'data-status': String(res.status), text: 'Status ' + res.status + ' ' + res.statusText + ' · ' + ms + ' ms' }),
          el('details', {}, el('summary', { text: 'Headers' }), el('pre', { class: 'headers', text: hdrs })),
          el('pre', { class: 'body', text: shown }));
      } catch (e) {
        out.replaceChildren(el('div', { class: 'status bad', text: 'Request failed: ' + e.message }));
      }
    } });
    box.append(send, out);
    return box;
  }

  async function channels() {
    markNav('channels');
    document.title = 'Reference: socket channels';
    const doc = await getJson('/asyncapi.json');
    const msgs = doc.components.messages;
    const view = el('article', {}, el('h1', { text: 'Socket channels' }), markdown(doc.info.description));
    for (const [key, ch] of Object.entries(doc.channels)) {
      view.append(el('h2', { id: 'ch-' + key }, el('code', { text: ch.address }), ' ' + ch.title), markdown(ch.description));
      view.append(el('h3', { text: 'Handshake auth' }), fieldTable(doc.components.schemas[key + 'Handshake']));
      const ops = Object.values(doc.operations).filter((o) => o.channel.$ref === '#/channels/' + key);
      const msgOf = (ref) => msgs[ref.split('/').pop()];
      view.append(el('h3', { text: 'Client → server' }));
      for (const o of ops.filter((o) => o.action === 'receive')) {
        const m = msgOf(o.messages[0].$ref);
        const ack = o.reply ? msgOf(o.reply.messages[0].$ref) : null;
        view.append(el('div', { class: 'panel event', 'data-event': m.name }, el('h4', { text: m.name }), el('p', {}, inline(m.summary || '')),
          o['x-who'] ? el('p', { class: 'muted', text: 'Only ' + o['x-who'] + ' may send it.' }) : null,
          fieldTable(m.payload, 'Payload'), ack ? el('p', { class: 'muted', text: 'Ack:' }) : null, ack ? fieldTable(ack.payload.anyOf[0], 'Ack') : null));
      }
      view.append(el('h3', { text: 'Server → client' }));
      for (const o of ops.filter((o) => o.action === 'send')) {
        const m = msgOf(o.messages[0].$ref);
        view.append(el('div', { class: 'panel event', 'data-event': m.name }, el('h4', { text: m.name }), el('p', {}, inline(m.summary || '')), fieldTable(m.payload, 'Payload')));
      }
    }
    content.replaceChildren(view);
  }

  // ---- routing
  let searching = false;
  async function route() {
    if (searching) return;
    const h = decodeURIComponent(location.hash.slice(1) || '/');
    try {
      const op = /^\/op\/(GET|POST|PUT|PATCH|DELETE)(\/.*)$/.exec(h);
      if (op) await operation(op[1], op[2]);
      else if (h.startsWith('/section/')) await section(h.slice('/section/'.length));
      else if (h === '/channels') await channels();
      else home();
      window.scrollTo(0, 0);
    } catch (e) {
      content.replaceChildren(el('h1', { text: 'Not found' }), el('p', { text: String(e.message) }), el('p', {}, el('a', { href: '#/', text: 'Back to getting started' })));
    }
  }
  window.addEventListener('hashchange', () => { if (searching) { searching = false; $('filter').value = ''; } route(); });

  // ---- search: debounced; an answer to an older query is dropped
  let timer, asked = 0, inflight;
  $('filter').addEventListener('input', () => {
    clearTimeout(timer);
    const q = $('filter').value.trim();
    if (!q) { asked++; if (inflight) inflight.abort(); searching = false; route(); return; }
    timer = setTimeout(() => runSearch(q), 220);
  });
  async function runSearch(q) {
    const mine = ++asked;
    if (inflight) inflight.abort();
    inflight = new AbortController();
    try {
      const r = await (await fetch('/documentation/search?limit=40&q=' + encodeURIComponent(q), { signal: inflight.signal })).json();
      if (mine !== asked || $('filter').value.trim() !== q) return;
      searching = true;
      markNav('');
      content.replaceChildren(el('h1', { text: 'Search' }),
        el('p', { class: 'muted', 'data-query': q, id: 'search-summary', text: r.count + (r.count === 1 ? ' result' : ' results') + ' for “' + q + '”' }),
        opList(r.results, true));
    } catch (e) {
      if (e.name !== 'AbortError') content.replaceChildren(el('p', { text: 'Search failed: ' + e.message }));
    }
  }
  content.addEventListener('click', (e) => {
    const a = e.target.closest && e.target.closest('a[href^="#/"]');
    if (a && searching) { searching = false; $('filter').value = ''; if (a.getAttribute('href') === location.hash) { e.preventDefault(); route(); } }
  });

  async function start() {
    index = await getJson('/documentation/sections.json');
    $('counts').textContent = index.endpoints + (index.endpoints === 1 ? ' endpoint' : ' endpoints') + ' in ' + index.sections.length + ' sections';
    const list = $('sections');
    for (const s of index.sections) list.append(el('a', { href: '#/section/' + s.slug, 'data-view': 's:' + s.slug, 'data-slug': s.slug }, el('span', { text: s.name }), el('span', { class: 'count', text: String(s.count) })));
    // On a phone the section list and the credentials fold away; on a wide screen they stay open.
    if (matchMedia('(max-width: 760px)').matches) $('navbox').open = false;
    else $('creds').open = true;
    await route();
  }
  start();
})();
`;
