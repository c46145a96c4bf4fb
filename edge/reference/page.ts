// The browsable reference at /documentation: one self-contained page (no CDN, works offline). It
// loads the section index first, then one section on demand, and has a request runner: base URL,
// orgid and bearer token fields, a form for path and query parameters, a JSON editor for the
// body, and the answer shown with its status and headers. Everything from the API is rendered
// with textContent, never as HTML.

export function documentationPage(title: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} reference</title>
<style>
  :root { --fg:#1d2330; --muted:#5b6472; --line:#dde2ea; --accent:#2457c5; --bg:#f7f8fb; }
  * { box-sizing: border-box; }
  body { margin:0; font:14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color:var(--fg); background:var(--bg); }
  header { padding:12px 20px; background:#fff; border-bottom:1px solid var(--line); display:flex; gap:16px; align-items:center; flex-wrap:wrap; }
  header h1 { font-size:18px; margin:0 12px 0 0; }
  header label { font-size:12px; color:var(--muted); display:flex; flex-direction:column; }
  header input { font:inherit; padding:4px 6px; border:1px solid var(--line); border-radius:4px; min-width:160px; }
  main { display:grid; grid-template-columns: 280px 1fr; min-height: calc(100vh - 64px); }
  nav { border-right:1px solid var(--line); background:#fff; padding:10px; overflow:auto; max-height: calc(100vh - 64px); }
  nav input { width:100%; font:inherit; padding:6px; border:1px solid var(--line); border-radius:4px; margin-bottom:8px; }
  nav button { display:flex; justify-content:space-between; width:100%; text-align:left; border:0; background:none; padding:5px 6px; cursor:pointer; border-radius:4px; font:inherit; color:var(--fg); }
  nav button:hover, nav button.active { background:#e9eefb; }
  nav .count { color:var(--muted); }
  #content { padding:16px 24px; overflow:auto; max-height: calc(100vh - 64px); }
  .summary { color:var(--muted); }
  .endpoint { background:#fff; border:1px solid var(--line); border-radius:6px; margin:0 0 12px; }
  .endpoint > h3 { margin:0; padding:10px 12px; font-size:14px; cursor:pointer; display:flex; gap:10px; align-items:baseline; }
  .method { font-weight:700; font-family:ui-monospace, monospace; min-width:58px; }
  .GET { color:#137333; } .POST { color:#2457c5; } .PUT, .PATCH { color:#a15c00; } .DELETE { color:#b3261e; }
  .path { font-family:ui-monospace, monospace; }
  .runner { border-top:1px solid var(--line); padding:10px 12px; display:none; }
  .endpoint.open .runner { display:block; }
  .runner label { display:block; font-size:12px; color:var(--muted); margin-top:6px; }
  .runner input, .runner textarea { width:100%; font:12px ui-monospace, monospace; padding:5px; border:1px solid var(--line); border-radius:4px; }
  .runner textarea { min-height:110px; }
  .runner button.send { margin-top:8px; background:var(--accent); color:#fff; border:0; border-radius:4px; padding:6px 14px; cursor:pointer; }
  pre { background:#0f1420; color:#e8ecf3; padding:10px; border-radius:4px; overflow:auto; max-height:360px; font-size:12px; }
  .status { font-weight:700; margin-top:10px; }
  .access { font-size:12px; color:var(--muted); padding:0 12px 8px; }
</style>
</head>
<body>
<header>
  <h1>${escapeHtml(title)}</h1>
  <span id="counts" class="summary"></span>
  <label>Base URL <input id="base" autocomplete="off"></label>
  <label>orgid <input id="orgid" autocomplete="off"></label>
  <label>Bearer token <input id="token" autocomplete="off"></label>
</header>
<main>
  <nav>
    <input id="filter" placeholder="Search endpoints" aria-label="Search endpoints">
    <div id="sections"></div>
  </nav>
  <section id="content"><p class="summary">Choose a section.</p></section>
</main>
<script>
(() => {
  const $ = (id) => document.getElementById(id);
  const el = (tag, props = {}, ...kids) => {
    const n = document.createElement(tag);
    for (const [k, v] of Object.entries(props)) {
      if (k === 'class') n.className = v; else if (k === 'text') n.textContent = v; else if (k.startsWith('on')) n.addEventListener(k.slice(2), v); else n.setAttribute(k, v);
    }
    for (const c of kids) n.append(c);
    return n;
  };
  for (const id of ['base', 'orgid', 'token']) {
    $(id).value = localStorage.getItem('ref.' + id) || (id === 'base' ? location.origin : '');
    $(id).addEventListener('change', () => localStorage.setItem('ref.' + id, $(id).value));
  }

  function example(schema, depth = 0) {
    if (!schema || depth > 5) return null;
    if (schema.default !== undefined) return schema.default;
    if (schema.const !== undefined) return schema.const;
    if (schema.enum) return schema.enum[0];
    if (schema.anyOf || schema.oneOf) return example((schema.anyOf || schema.oneOf)[0], depth + 1);
    const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
    if (type === 'object' || schema.properties) {
      const out = {};
      const required = new Set(schema.required || []);
      for (const [k, v] of Object.entries(schema.properties || {})) if (required.has(k) || depth === 0) out[k] = example(v, depth + 1);
      return out;
    }
    if (type === 'array') return [];
    if (type === 'integer' || type === 'number') return schema.minimum ?? 0;
    if (type === 'boolean') return false;
    if (type === 'string') return schema.format === 'date-time' ? new Date().toISOString() : '';
    return null;
  }

  function runner(ep) {
    const op = ep.operation || {};
    const params = op.parameters || [];
    const inputs = {};
    const box = el('div', { class: 'runner' });
    if (ep.description) box.append(el('p', { text: ep.description }));
    for (const p of params.filter((p) => p.in === 'path' || p.in === 'query')) {
      const input = el('input', { 'data-param': p.name, placeholder: p.in + (p.required ? ' (required)' : '') });
      inputs[p.in + ':' + p.name] = input;
      box.append(el('label', { text: p.name + ' (' + p.in + ')' }), input);
    }
    let body;
    const media = op.requestBody && op.requestBody.content && op.requestBody.content['application/json'];
    if (media) {
      body = el('textarea', { 'aria-label': 'JSON body' });
      body.value = JSON.stringify(example(media.schema), null, 2);
      box.append(el('label', { text: 'Body (JSON)' }), body);
    }
    const out = el('div', { class: 'result' });
    const send = el('button', { class: 'send', text: 'Send request', onclick: async () => {
      let path = ep.path;
      for (const p of params.filter((p) => p.in === 'path')) path = path.replace(':' + p.name, encodeURIComponent(inputs['path:' + p.name].value));
      const qs = new URLSearchParams();
      for (const p of params.filter((p) => p.in === 'query')) if (inputs['query:' + p.name].value) qs.set(p.name, inputs['query:' + p.name].value);
      const headers = {};
      if ($('orgid').value) headers.orgid = $('orgid').value;
      if ($('token').value) headers.authorization = 'Bearer ' + $('token').value;
      const init = { method: ep.method, headers };
      if (body) { headers['content-type'] = 'application/json'; init.body = body.value; }
      out.replaceChildren(el('p', { class: 'summary', text: 'Sending…' }));
      try {
        const res = await fetch($('base').value.replace(/\\/$/, '') + path + (qs.size ? '?' + qs : ''), init);
        const text = await res.text();
        let shown = text;
        try { shown = JSON.stringify(JSON.parse(text), null, 2); } catch {}
        const hdrs = [...res.headers.entries()].map(([k, v]) => k + ': ' + v).join('\\n');
        out.replaceChildren(
          el('div', { class: 'status', 'data-status': String(res.status), text: 'Status ' + res.status + ' ' + res.statusText }),
          el('pre', { class: 'headers', text: hdrs }),
          el('pre', { class: 'body', text: shown }));
      } catch (e) {
        out.replaceChildren(el('div', { class: 'status', text: 'Request failed: ' + e.message }));
      }
    } });
    box.append(send, out);
    return box;
  }

  function renderSection(sec) {
    const content = $('content');
    content.replaceChildren(el('h2', { text: sec.name }), el('p', { class: 'summary', text: sec.endpoints.length + ' endpoints' }));
    for (const ep of sec.endpoints) {
      const card = el('div', { class: 'endpoint', 'data-method': ep.method, 'data-path': ep.path });
      const head = el('h3', { onclick: () => card.classList.toggle('open') },
        el('span', { class: 'method ' + ep.method, text: ep.method }),
        el('span', { class: 'path', text: ep.path }),
        el('span', { class: 'summary', text: ep.summary }));
      card.append(head, el('div', { class: 'access', text: ep.access }), runner(ep));
      content.append(card);
    }
  }

  async function openSection(slug, button) {
    for (const b of document.querySelectorAll('nav button')) b.classList.toggle('active', b === button);
    const res = await fetch('/documentation/tag/' + slug + '.json');
    renderSection(await res.json());
  }

  async function start() {
    const index = await (await fetch('/documentation/sections.json')).json();
    $('counts').textContent = index.endpoints + ' endpoints in ' + index.sections.length + ' sections';
    const list = $('sections');
    for (const s of index.sections) {
      const b = el('button', { 'data-slug': s.slug, onclick: () => openSection(s.slug, b) }, el('span', { text: s.name }), el('span', { class: 'count', text: String(s.count) }));
      list.append(b);
    }
    $('filter').addEventListener('input', async (e) => {
      const q = e.target.value.trim();
      if (!q) return;
      const r = await (await fetch('/documentation/search?q=' + encodeURIComponent(q))).json();
      const sec = { name: 'Search: ' + q, endpoints: [] };
      for (const hit of r.results.slice(0, 30)) {
        const one = await (await fetch(hit.detail + '&format=json')).json();
        sec.endpoints.push(one);
      }
      renderSection(sec);
    });
  }
  start();
})();
</script>
</body>
</html>
`;
}

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}
