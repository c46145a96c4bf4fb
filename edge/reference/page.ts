// The browsable reference at /documentation: one self-contained page (no CDN, works offline).
// Views have their own addresses in the fragment (#/, #/section/<slug>, #/op/<METHOD><path>,
// #/channels), so a link opens an operation and back and forward work. It loads the section index
// first, then what a view needs. Everything from the API is rendered with textContent, never as
// HTML; Markdown is turned into elements by a small renderer (page-script.ts).
import { PAGE_SCRIPT } from './page-script.js';
import { PAGE_STYLE } from './page-style.js';

export function documentationPage(title: string, guideMarkdown: string): string {
  const guide = JSON.stringify(guideMarkdown).replace(/</g, '\\u003c');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<title>${escapeHtml(title)} reference</title>
<style>${PAGE_STYLE}</style>
</head>
<body>
<header>
  <a class="brand" href="#/">${escapeHtml(title)}</a>
  <span id="counts" class="muted"></span>
  <input id="filter" type="search" placeholder="Search: path, summary or words" aria-label="Search the reference" autocomplete="off">
  <details id="creds">
    <summary>Credentials</summary>
    <div class="creds">
      <label>Base URL <input id="base" autocomplete="off"></label>
      <label>orgid <input id="orgid" autocomplete="off"></label>
      <label>Bearer token <input id="token" autocomplete="off"></label>
    </div>
  </details>
</header>
<main>
  <nav>
    <details id="navbox" open>
      <summary>Sections</summary>
      <a href="#/" data-view="home">Getting started</a>
      <a href="#/channels" data-view="channels">Socket channels</a>
      <div id="sections"></div>
    </details>
  </nav>
  <section id="content" aria-live="polite"><p class="muted">Loading…</p></section>
</main>
<script type="application/json" id="guide">${guide}</script>
<script>${PAGE_SCRIPT}</script>
</body>
</html>
`;
}

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}
