// The live door view at /events/:id/door: one self-contained page (no CDN, no framework) that holds
// no data. Its script reads the event id from the address, signs in with the reference page's
// credentials (same browser storage) and reads the door's Server-Sent Events with fetch(), which,
// unlike EventSource, can send the orgid and bearer headers. Everything from the API is rendered
// with textContent, never as HTML.
import { DOOR_SCRIPT } from './page-script.js';
import { DOOR_STYLE } from './page-style.js';

export function doorViewPage(): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<title>Door</title>
<style>${DOOR_STYLE}</style>
</head>
<body>
<header>
  <div class="title">
    <span class="brand">Door</span>
    <span id="event-name" class="muted"></span>
  </div>
  <span id="status" class="status" data-state="idle">Not connected</span>
  <details id="creds">
    <summary>Sign in</summary>
    <form id="signin" class="creds">
      <label>Base URL <input id="base" autocomplete="off"></label>
      <label>orgid <input id="orgid" autocomplete="off" required></label>
      <label>Bearer token <input id="token" autocomplete="off" required></label>
      <button type="submit">Connect</button>
      <p class="muted hint">The same credentials as the reference at <a href="/documentation">/documentation</a>: signing in on one signs in on the other. A staff token is needed.</p>
    </form>
  </details>
</header>
<main id="view" aria-live="polite">
  <section class="tiles" id="tiles"></section>
  <section class="card" id="zones-card"><h2>Zones</h2><div id="zones"><p class="muted">No data yet.</p></div></section>
  <section class="card wide" id="rate-card"><h2>Scans per minute, last hour</h2><div id="rate"><p class="muted">No data yet.</p></div></section>
  <section class="card" id="denials-card"><h2>Denials by reason</h2><div id="denials"><p class="muted">No data yet.</p></div></section>
  <section class="card" id="devices-card"><h2>Devices seen</h2><div id="devices"><p class="muted">No data yet.</p></div></section>
</main>
<footer class="muted" id="asof"></footer>
<script>${DOOR_SCRIPT}</script>
</body>
</html>
`;
}
