// The door view's stylesheet: the reference page's colours, cards that fall into one column on a
// phone, and charts that scale to their box (SVG with a viewBox), so nothing scrolls sideways at 390 px.
export const DOOR_STYLE = String.raw`
  :root { --fg:#1d2330; --muted:#5b6472; --line:#dde2ea; --accent:#2457c5; --bg:#f7f8fb; --ok:#2e9d5b; --warn:#d98a1c; --bad:#cc3b3b; }
  * { box-sizing: border-box; }
  html, body { overflow-x: hidden; }
  body { margin:0; font:15px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color:var(--fg); background:var(--bg); }
  a { color: var(--accent); }
  .muted { color:var(--muted); }
  .small { font-size:12px; }
  header { position: sticky; top:0; z-index:2; background:#fff; border-bottom:1px solid var(--line); padding:10px 16px; display:flex; flex-wrap:wrap; gap:8px 14px; align-items:center; }
  .title { display:flex; gap:10px; align-items:baseline; flex:1 1 auto; min-width:0; }
  .brand { font-size:18px; font-weight:700; }
  #event-name { overflow:hidden; text-overflow:ellipsis; white-space:nowrap; min-width:0; }
  .status { font-size:13px; padding:2px 10px; border-radius:999px; background:#eef1f6; color:var(--muted); white-space:nowrap; }
  .status::before { content:''; display:inline-block; width:8px; height:8px; border-radius:50%; background:currentColor; margin-right:6px; vertical-align:1px; }
  .status[data-state="live"] { background:#e3f4ea; color:var(--ok); }
  .status[data-state="connecting"] { background:#fdf1df; color:#9a5d06; }
  .status[data-state="error"] { background:#fbe6e6; color:var(--bad); }
  #creds { flex-basis:100%; }
  #creds:not([open]) { flex-basis:auto; }
  #creds summary { cursor:pointer; color:var(--accent); font-size:14px; }
  .creds { display:flex; gap:10px; flex-wrap:wrap; align-items:flex-end; padding-top:8px; }
  .creds label { font-size:12px; color:var(--muted); display:flex; flex-direction:column; flex:1 1 200px; min-width:0; }
  .creds input { font:13px ui-monospace, monospace; padding:6px 8px; border:1px solid var(--line); border-radius:4px; width:100%; }
  .creds button { font:inherit; padding:6px 16px; border:0; border-radius:6px; background:var(--accent); color:#fff; cursor:pointer; }
  .creds .hint { flex-basis:100%; margin:0; font-size:12px; }
  /* Dense: the cards after the wide chart fill the row beside the zones instead of leaving it empty. */
  main { display:grid; grid-template-columns: repeat(auto-fit, minmax(min(100%, 340px), 1fr)); grid-auto-flow: row dense; gap:14px; padding:14px 16px; max-width:1400px; margin:0 auto; }
  .tiles { grid-column: 1 / -1; display:grid; grid-template-columns: repeat(auto-fit, minmax(110px, 1fr)); gap:10px; }
  .tile { background:#fff; border:1px solid var(--line); border-radius:8px; padding:10px 12px; display:flex; flex-direction:column; }
  .tile .n { font-size:26px; font-weight:700; font-variant-numeric: tabular-nums; }
  .tile .label { font-size:12px; color:var(--muted); text-transform:uppercase; letter-spacing:.04em; }
  .tile.warn .n { color:#9a5d06; }
  .tile.bad .n { color:var(--bad); }
  .card { background:#fff; border:1px solid var(--line); border-radius:8px; padding:12px 14px; min-width:0; }
  .card.wide { grid-column: 1 / -1; }
  .card h2 { font-size:14px; margin:0 0 10px; color:var(--muted); text-transform:uppercase; letter-spacing:.04em; }
  .row { display:flex; justify-content:space-between; gap:10px; align-items:baseline; min-width:0; }
  .row .name { font-weight:600; overflow:hidden; text-overflow:ellipsis; white-space:nowrap; min-width:0; }
  .row .count { font-variant-numeric: tabular-nums; white-space:nowrap; }
  .zone, .reason { margin-bottom:12px; }
  .bar { height:12px; background:#eef1f6; border-radius:6px; overflow:hidden; margin:4px 0 2px; }
  .bar.thin { height:6px; }
  .bar span { display:block; height:100%; background:var(--ok); transition: width .3s; }
  .bar.warn span { background:var(--warn); }
  .bar.bad span { background:var(--bad); }
  .bar.open span { background:var(--accent); }
  #rate { display:grid; grid-template-columns: repeat(auto-fit, minmax(min(100%, 420px), 1fr)); gap:14px 20px; }
  figure.checkpoint { margin:0; min-width:0; }
  figcaption { display:flex; flex-wrap:wrap; justify-content:space-between; gap:2px 10px; font-size:13px; }
  figcaption .name { font-weight:600; }
  svg.chart { display:block; width:100%; height:90px; margin-top:4px; background:linear-gradient(#fafbfd, #fff); }
  svg.chart rect { fill: var(--accent); }
  svg.chart .axis { stroke: var(--line); stroke-width:1; }
  svg.chart .grid { stroke: #eef1f6; stroke-width:1; stroke-dasharray: 4 4; }
  .axis-labels { display:flex; justify-content:space-between; }
  code { font:12px ui-monospace, monospace; background:#eef1f6; padding:1px 5px; border-radius:3px; overflow-wrap:anywhere; }
  ul.devices { list-style:none; margin:0; padding:0; }
  ul.devices li { padding:7px 0; border-bottom:1px solid #eef1f6; }
  ul.devices li:last-child { border-bottom:0; }
  footer { padding:0 16px 24px; max-width:1400px; margin:0 auto; font-size:12px; }
  @media (max-width: 480px) {
    header { padding:8px 12px; }
    main { padding:10px 12px; gap:10px; }
    .tiles { grid-template-columns: repeat(3, minmax(0, 1fr)); gap:8px; }
    .tile { padding:8px 10px; }
    .tile .n { font-size:20px; }
    .tile .label { font-size:10px; }
  }
`;
