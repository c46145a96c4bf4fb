// The live door view in a real browser: headless Chromium (Debian package `chromium`, installed by
// .ci/run) driven by playwright-core, as test/reference/browser.test.ts does. Screenshots go to a
// temp dir, or to SHOT_DIR when set (to look at them).
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Page } from 'playwright-core';
import t from 'tap';
import { tempDir, tokenFor } from '../helpers/app.js';
import { client } from '../helpers/http.js';
import { eventsWorld, makeTicket, makeVenue } from './setup.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

t.test('door view page', async (t) => {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`Chromium not found at ${CHROMIUM}: install the Debian package chromium (apt-get install -y chromium) or set CHROMIUM_PATH`);
  }
  const w = await eventsWorld(t, { modules: ['events', 'records', 'reference'] });
  const ev = await makeVenue(w.staff);
  const tickets: any[] = [];
  for (let i = 0; i < 6; i++) tickets.push(await makeTicket(w.staff, ev, { ticketTypeId: ev.types.GA, holderName: `Guest ${i}` }));
  const token = tokenFor(w.app, { org: w.org, sub: 'staff-1' });

  // An enrolled scanner at Gate A, and some door history: entries, a denial, scans an hour back.
  const admin = client(w.app.url, { orgid: w.org, authorization: `Bearer ${tokenFor(w.app, { org: w.org, sub: 'admin-1', roles: ['User', 'Admin'] })}` });
  const enrol = await admin.post('/events/devices', { name: 'Gate A scanner', eventIds: [ev.id], checkpoint: 'Gate A' });
  const init = await w.anon.post('/events/devices/initialize', { initToken: enrol.body.initToken });
  const device = client(w.app.url, { orgid: w.org, authorization: `Device ${init.body.token}` });
  const now = Date.now();
  const ago = (min: number) => new Date(now - min * 60_000).toISOString();
  for (let i = 0; i < 3; i++) {
    const r = await device.post('/events/checkin', { code: tickets[i].data.number, eventId: ev.id, zone: 'hall', scannedAt: ago(40 - i * 15), nonce: `n${i}` });
    t.equal(r.body.success, true);
  }
  t.equal((await w.staff.post('/events/checkin', { code: tickets[3].data.number, eventId: ev.id, zone: 'lounge', checkpoint: 'Lounge door' })).body.success, true);
  t.equal((await w.staff.post('/events/checkin', { code: 'NOPE-0000', eventId: ev.id, zone: 'hall', checkpoint: 'Gate B' })).body.reason, 'invalid_code');

  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  t.teardown(() => browser.close());
  const shots = process.env.SHOT_DIR ?? join(tempDir(t, 'bp-shot-'), 'shots');
  mkdirSync(shots, { recursive: true });
  const errors: string[] = [];
  const watch = (page: Page) => {
    page.on('console', (m) => {
      if (m.type() === 'error') errors.push(m.text());
    });
    page.on('pageerror', (e) => errors.push(String(e)));
  };
  const hall = (page: Page) => page.locator('#zones [data-zone="hall"]');

  // One browser context: its pages share localStorage, as a user's tabs do.
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  watch(page);

  t.test('signs in like the reference page, then shows the door', async (t) => {
    await page.goto(`${w.app.url}/events/${ev.id}/door`);
    t.equal(await page.getAttribute('#status', 'data-state'), 'idle', 'no credentials yet: not connected');
    t.ok(await page.evaluate<boolean>("document.getElementById('creds').open"), 'the sign-in opens by itself');
    await page.fill('#orgid', w.org);
    await page.fill('#token', token);
    await page.click('#signin button[type="submit"]');
    await page.waitForSelector('#status[data-state="live"]');
    await hall(page).waitFor();
    t.equal(await hall(page).getAttribute('data-inside'), '3');
    t.equal(await hall(page).locator('.count').textContent(), '3 / 500', 'occupancy against capacity');
    t.equal(await page.textContent('#event-name'), 'Venue night');
    t.equal(await page.locator('#rate figure.checkpoint').count(), 3, 'a chart per checkpoint');
    t.equal(await page.locator('#rate figure[data-checkpoint="Gate A"] rect').count(), 3, 'Gate A: three minutes with scans');
    t.match(await page.textContent('#denials'), /invalid_code\s*1/);
    t.match(await page.textContent('#devices'), /Gate A scanner/);
    t.equal(await page.evaluate<string | null>("localStorage.getItem('ref.token')"), token, "kept under the reference page's key");
  });

  t.test('a scan sent over HTTP shows within a second', async (t) => {
    const sent = Date.now();
    t.equal((await w.staff.post('/events/checkin', { code: tickets[4].data.number, eventId: ev.id, zone: 'hall', checkpoint: 'Gate B' })).body.success, true);
    await page.waitForSelector('#zones [data-zone="hall"][data-inside="4"]', { timeout: 1000 });
    t.ok(Date.now() - sent < 1000, `shown ${Date.now() - sent} ms after it was sent`);
    t.equal(await hall(page).locator('.count').textContent(), '4 / 500');
    await page.screenshot({ path: join(shots, 'door-1280.png'), fullPage: true });
  });

  t.test('the reference page is signed in too', async (t) => {
    const ref = await context.newPage();
    watch(ref);
    await ref.goto(`${w.app.url}/documentation`);
    t.equal(await ref.inputValue('#orgid'), w.org);
    t.equal(await ref.inputValue('#token'), token);
    await ref.close();
  });

  t.test('a phone: 390 px wide, nothing scrolls sideways', async (t) => {
    // A new page of the same browser context: signed in already.
    const phone = await context.newPage();
    await phone.setViewportSize({ width: 390, height: 844 });
    watch(phone);
    await phone.goto(`${w.app.url}/events/${ev.id}/door`);
    await phone.waitForSelector('#status[data-state="live"]');
    await phone.waitForSelector('#zones [data-zone="hall"][data-inside="4"]');
    const widths = await phone.evaluate<{ doc: number; body: number; over: string[] }>(`({
      doc: document.documentElement.scrollWidth,
      body: document.body.scrollWidth,
      over: [...document.querySelectorAll('header, main, .card, .tile, figure')].filter((e) => e.scrollWidth > e.clientWidth + 1).map((e) => e.id || e.className),
    })`);
    t.ok(widths.doc <= 390 && widths.body <= 390, `the page is ${widths.doc} px wide (body ${widths.body})`);
    t.same(widths.over, [], 'no box overflows its width');
    await phone.screenshot({ path: join(shots, 'door-390.png'), fullPage: true });
    // Live here too.
    t.equal((await w.staff.post('/events/checkin', { code: tickets[5].data.number, eventId: ev.id, zone: 'lounge', checkpoint: 'Lounge door' })).body.success, true);
    await phone.waitForSelector('#zones [data-zone="lounge"][data-inside="2"]', { timeout: 1000 });
    await phone.close();

    // Signed out (another browser): the sign-in form fits too.
    const fresh = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
    const out = await fresh.newPage();
    watch(out);
    await out.goto(`${w.app.url}/events/${ev.id}/door`);
    await out.waitForSelector('#signin input#token');
    t.ok((await out.evaluate<number>('document.body.scrollWidth')) <= 390, 'the sign-in form fits');
    await out.screenshot({ path: join(shots, 'door-390-signin.png'), fullPage: false });
    await fresh.close();
  });

  t.test('no console errors on the way', async (t) => {
    t.same(errors, []);
  });
});
