// The reference page's stylesheet. One column under 760 px wide: the section list folds into a
// drawer and wide tables and code scroll inside their own box, so a phone never scrolls sideways.
export const PAGE_STYLE = String.raw`
  :root { --fg:#1d2330; --muted:#5b6472; --line:#dde2ea; --accent:#2457c5; --bg:#f7f8fb; --code:#eef1f6; }
  * { box-sizing: border-box; }
  html, body { overflow-x: hidden; }
  body { margin:0; font:15px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; color:var(--fg); background:var(--bg); }
  a { color: var(--accent); text-decoration: none; }
  a:hover { text-decoration: underline; }
  header { position: sticky; top: 0; z-index: 2; padding:10px 20px; background:#fff; border-bottom:1px solid var(--line); display:flex; gap:12px; align-items:center; flex-wrap:wrap; }
  .brand { font-size:18px; font-weight:700; color:var(--fg); }
  .muted { color:var(--muted); }
  #filter { flex: 1 1 260px; min-width: 0; font:inherit; padding:7px 10px; border:1px solid var(--line); border-radius:6px; }
  #creds summary { cursor:pointer; color:var(--muted); }
  .creds { display:flex; gap:10px; flex-wrap:wrap; padding-top:6px; }
  .creds label { font-size:12px; color:var(--muted); display:flex; flex-direction:column; }
  .creds input { font:13px ui-monospace, monospace; padding:4px 6px; border:1px solid var(--line); border-radius:4px; width: 220px; max-width: 100%; }
  main { display:grid; grid-template-columns: 270px minmax(0, 1fr); }
  nav { border-right:1px solid var(--line); background:#fff; padding:10px; position: sticky; top: 58px; align-self: start; max-height: calc(100vh - 58px); overflow:auto; }
  nav summary { font-weight:600; cursor:pointer; padding:4px 6px; }
  nav a { display:flex; justify-content:space-between; gap:8px; padding:5px 8px; border-radius:4px; color:var(--fg); }
  nav a:hover { background:#eef2fb; text-decoration:none; }
  nav a.active { background:#e3eafb; font-weight:600; }
  nav .count { color:var(--muted); font-weight:400; }
  #content { padding:18px 28px 60px; min-width: 0; max-width: 1500px; }
  .opgrid { display:grid; grid-template-columns: minmax(0, 1fr); gap: 0 24px; }
  .side pre.example { max-height: 300px; }
  @media (min-width: 1180px) {
    .opgrid { grid-template-columns: minmax(0, 1fr) minmax(0, 460px); }
    .side { position: sticky; top: 70px; align-self: start; max-height: calc(100vh - 80px); overflow: auto; }
    .side .panel { margin-top: 0; }
  }
  h1, h2, h3 { line-height:1.25; }
  h2 { margin: 1.4em 0 .5em; } h3 { margin: 1.2em 0 .4em; }
  code { background:var(--code); padding:1px 4px; border-radius:3px; font:13px ui-monospace, monospace; overflow-wrap:anywhere; }
  pre { background:#0f1420; color:#e8ecf3; padding:10px 12px; border-radius:6px; overflow:auto; max-height:420px; font:12.5px/1.45 ui-monospace, monospace; }
  pre code { background:none; padding:0; color:inherit; }
  .scroll { overflow-x:auto; max-width:100%; }
  table { border-collapse: collapse; width:100%; margin: 6px 0 14px; background:#fff; font-size:14px; }
  th, td { text-align:left; vertical-align:top; border:1px solid var(--line); padding:5px 8px; }
  th { background:#f0f3f8; font-weight:600; }
  td.name { font-family: ui-monospace, monospace; font-size:13px; overflow-wrap:anywhere; min-width: 110px; }
  .method { font-weight:700; font-family:ui-monospace, monospace; display:inline-block; min-width:62px; }
  .GET { color:#137333; } .POST { color:#2457c5; } .PUT, .PATCH { color:#a15c00; } .DELETE { color:#b3261e; }
  .path { font-family:ui-monospace, monospace; overflow-wrap:anywhere; }
  .oplist a { display:grid; grid-template-columns: 70px minmax(0, 1fr); gap: 2px 10px; padding:8px 10px; background:#fff; border:1px solid var(--line); border-radius:6px; margin-bottom:6px; color:var(--fg); }
  .oplist a:hover { border-color: var(--accent); text-decoration:none; }
  .oplist .summary { grid-column: 2; color:var(--muted); font-size:14px; }
  .oplist .where { grid-column: 2; color:var(--muted); font-size:12px; }
  .ophead { display:flex; flex-wrap:wrap; gap:6px 12px; align-items:baseline; }
  .ophead h2 { margin:0; font-size:20px; }
  .badge { display:inline-block; font-size:12px; padding:2px 8px; border-radius:10px; background:#eef2fb; color:#23408e; }
  .panel { background:#fff; border:1px solid var(--line); border-radius:8px; padding:12px 14px; margin:14px 0; }
  .runner .hint { font-size: 12px; margin: -4px 0 4px; }
  .runner label { display:block; font-size:12px; color:var(--muted); margin-top:8px; }
  .runner input, .runner textarea { width:100%; font:13px ui-monospace, monospace; padding:6px; border:1px solid var(--line); border-radius:4px; }
  .runner textarea { min-height:160px; }
  button { font:inherit; cursor:pointer; }
  .send, .primary { margin-top:10px; background:var(--accent); color:#fff; border:0; border-radius:5px; padding:7px 16px; }
  .ghost { background:none; border:1px solid var(--line); border-radius:5px; padding:3px 10px; margin:4px 6px 0 0; color:var(--fg); font-size:13px; }
  .status { font-weight:700; margin-top:12px; }
  .status.ok { color:#137333; } .status.bad { color:#b3261e; }
  .cards { display:grid; grid-template-columns: repeat(auto-fill, minmax(220px, 1fr)); gap:8px; }
  .cards a { background:#fff; border:1px solid var(--line); border-radius:6px; padding:8px 10px; color:var(--fg); }
  .cards a:hover { border-color:var(--accent); text-decoration:none; }
  .cards small { display:block; color:var(--muted); }
  .event h4 { margin: 0 0 4px; font: 600 14px ui-monospace, monospace; }
  @media (max-width: 760px) {
    header { padding:8px 12px; position: static; }
    #counts { display: none; }
    main { grid-template-columns: minmax(0, 1fr); }
    nav { position: static; max-height:none; border-right:0; border-bottom:1px solid var(--line); }
    #content { padding:12px 14px 40px; }
    .creds input { width: 100%; }
    /* Field tables as one card per field: five columns do not fit a phone. */
    table.fields thead { display: none; }
    table.fields, table.fields tbody, table.fields tr, table.fields td { display: block; width: 100%; }
    table.fields tr { border: 1px solid var(--line); border-radius: 6px; margin-bottom: 6px; padding: 4px 0; background: #fff; }
    table.fields td { border: 0; padding: 1px 10px; }
    table.fields td:empty { display: none; }
    table.fields td.name { font-weight: 700; }
    table.fields td[data-label]::before { content: attr(data-label) ": "; color: var(--muted); }
    .creds label { flex: 1 1 100%; }
  }
`;
