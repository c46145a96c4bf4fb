// A real browser against the reference page: headless Chromium (Debian package `chromium`,
// installed by .ci/run) driven by playwright-core. One server and one browser for the file.
// Screenshots go to a temp dir, or to SHOT_DIR when set (to look at them).
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Page } from 'playwright-core';
import t from 'tap';
import { createOrg, startTestApp, tempDir } from '../helpers/app.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

t.test('reference page', async (t) => {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`Chromium not found at ${CHROMIUM}: install the Debian package chromium (apt-get install -y chromium) or set CHROMIUM_PATH`);
  }
  const app = await startTestApp(t);
  await createOrg(app, 'acme');
  const documented = app.deps.routes.filter((r) => !(r.status && r.status >= 300 && r.status < 400));
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

  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  watch(page);
  const requests: string[] = [];
  page.on('request', (r) => requests.push(new URL(r.url()).pathname + new URL(r.url()).search));
  const content = page.locator('#content');

  t.test('the landing view: what it is, a quick start, the limits in force', async (t) => {
    await page.goto(`${app.url}/documentation`);
    await page.waitForSelector('nav a[data-slug="operations"]');
    t.match(await page.textContent('#counts'), new RegExp(`${documented.length} endpoints in \\d+ sections`), 'the page says what it lists');
    for (const h of ['Quick start', 'Authentication and refresh', 'Errors', 'Paging', 'Idempotency keys', 'Rate limits', 'Limits', 'Socket channels', 'Server-sent events']) {
      t.ok(await content.locator('h3', { hasText: new RegExp(`^${h}$`) }).count(), `the guide has ${h}`);
    }
    t.match(await content.textContent(), /MAX_BODY_BYTES/, 'the limits table, from the config in force');
    t.equal(await content.locator('code', { hasText: 'orgid' }).first().count(), 1, 'backticks render as code');
    t.notOk(requests.some((p) => p.startsWith('/documentation/tag/')), 'no section loaded before one is chosen');
    await page.screenshot({ path: join(shots, 'landing.png'), fullPage: false });
  });

  t.test('a section on demand, and a request from the runner', async (t) => {
    await page.click('nav a[data-slug="operations"]');
    await page.waitForURL(/#\/section\/operations$/);
    await content.locator('a[data-path="/healthz"]').click();
    const view = content.locator('article[data-path="/healthz"]');
    await view.waitFor();
    t.ok(requests.includes('/documentation/tag/operations.json'), 'the section was loaded on demand');
    await page.fill('#orgid', 'acme');
    await view.locator('button.send').click();
    const status = view.locator('.status');
    await status.waitFor();
    t.equal(await status.getAttribute('data-status'), '200');
    t.match(await view.locator('pre.body').textContent(), /"status": "ok"/);
    t.match(await view.locator('pre.headers').textContent(), /content-type: application\/json/);
    t.match(await status.textContent(), /\d+ ms/, 'the time it took');
  });

  t.test('search: typed key by key, one request when typing pauses, the answer for the whole query', async (t) => {
    await page.goto(`${app.url}/documentation#/`);
    await page.waitForSelector('nav a[data-slug="operations"]');
    const before = requests.length;
    await page.locator('#filter').pressSequentially('checkin', { delay: 30 });
    await page.waitForSelector('#search-summary[data-query="checkin"]');
    const sent = requests.slice(before).filter((p) => p.startsWith('/documentation/search'));
    t.ok(sent.length >= 1 && sent.length <= 2, `${sent.length} search request(s) for 7 keystrokes`);
    t.match(sent[sent.length - 1], /q=checkin/, 'the last one asked for the whole query');
    t.notOk(requests.slice(before).some((p) => p.startsWith('/documentation/endpoint')), 'no detail fetches per result');
    t.match(await content.locator('.oplist a').first().getAttribute('data-path'), /checkin/);
    await page.screenshot({ path: join(shots, 'search.png'), fullPage: false });

    // An earlier, slower answer must not replace a later one.
    await page.route('**/documentation/search?*', async (route) => {
      const q = new URL(route.request().url()).searchParams.get('q');
      if (q === 'se') await new Promise((r) => setTimeout(r, 800));
      await route.continue().catch(() => undefined);
    });
    await page.fill('#filter', '');
    await page.locator('#filter').pressSequentially('se');
    await page.waitForTimeout(300);
    await page.locator('#filter').pressSequentially('ttle');
    await page.waitForSelector('#search-summary[data-query="settle"]');
    await page.waitForTimeout(900);
    t.equal(await page.getAttribute('#search-summary', 'data-query'), 'settle', 'the late answer for "se" was dropped');
    t.match(await content.locator('.oplist a').first().getAttribute('data-path'), /settle/);
    await page.unroute('**/documentation/search?*');
    await page.fill('#filter', '');
    await content.locator('h1', { hasText: 'Getting started' }).waitFor();
    t.pass('clearing the box restores the view');
  });

  t.test('deep links: a result changes the URL, the URL opens the operation, back and forward work', async (t) => {
    await page.locator('#filter').pressSequentially('POST /events/checkin');
    await page.waitForSelector('#search-summary[data-query="POST /events/checkin"]');
    await content.locator('.oplist a[data-path="/events/checkin"][data-method="POST"]').click();
    await page.waitForURL(/#\/op\/POST\/events\/checkin$/);
    await content.locator('article[data-path="/events/checkin"]').waitFor();
    const link = page.url();
    t.ok(await content.locator('th', { hasText: 'Field' }).count(), 'a field table for the body');
    t.match(await content.textContent(), /Access: a staff token/);
    t.match(await content.textContent(), /already_checked_in/, 'the examples are shown');
    await page.screenshot({ path: join(shots, 'operation.png'), fullPage: false });

    const other = await browser.newPage();
    watch(other);
    await other.goto(link);
    await other.locator('#content article[data-path="/events/checkin"][data-method="POST"]').waitFor();
    t.pass('loading the URL opens the same operation');
    await other.close();

    await page.goBack();
    await content.locator('h1', { hasText: 'Getting started' }).waitFor();
    await page.goForward();
    await content.locator('article[data-path="/events/checkin"]').waitFor();
    t.pass('back and forward move between views');
  });

  t.test('sandbox sign-up, an event with a zone, a ticket, and Send on the prefilled scan answers 200', async (t) => {
    await page.goto(`${app.url}/documentation#/`);
    await page.click('#sandbox');
    await page.waitForFunction("document.getElementById('token').value.length > 20");
    const orgid = await page.inputValue('#orgid');
    t.ok(app.deps.store.getOrg(orgid), 'a real organisation was made');
    const send = async (method: string, path: string, status: number) => {
      await page.goto(`${app.url}/documentation#/op/${method}${path}`);
      const view = content.locator(`article[data-path="${path}"][data-method="${method}"]`);
      await view.waitFor();
      await view.locator('button.send').click();
      await view.locator('.status').waitFor();
      t.equal(await view.locator('.status').getAttribute('data-status'), String(status), `${method} ${path} with its prefilled example`);
      return JSON.parse((await view.locator('pre.body').textContent()) ?? '{}');
    };
    const event = await send('POST', '/events', 201);
    t.match(event.data.zones, [{ id: 'main-hall' }]);
    const ticket = await send('POST', '/events/:id/tickets', 201);
    t.equal(ticket.data.event, event.sk, 'the runner used the event it just made');
    const scan = await send('POST', '/events/checkin', 200);
    t.match(scan, { success: true, ticket: { sk: ticket.sk } });
  });

  t.test('after the sandbox sign-up alone, a ticket code pasted into the prefilled scan is admitted (no made-up event)', async (t) => {
    // A fresh session: the runner has learnt nothing but the sign-up.
    const fresh = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    watch(fresh);
    await fresh.goto(`${app.url}/documentation#/`);
    await fresh.click('#sandbox');
    await fresh.waitForFunction("document.getElementById('token').value.length > 20");
    const headers = { orgid: await fresh.inputValue('#orgid'), authorization: `Bearer ${await fresh.inputValue('#token')}`, 'content-type': 'application/json' };
    const post = (path: string, body: unknown): Promise<any> => fetch(app.url + path, { method: 'POST', headers, body: JSON.stringify(body) }).then((r) => r.json());
    const ev = await post('/events', { name: 'Pasted', zones: [{ id: 'main-hall', name: 'Main hall' }], ticketTypes: [{ title: 'GA' }] });
    const ticket = await post(`/events/${ev.sk}/tickets`, { ticketTypeId: ev.ticketTypes[0].sk, holderEmail: 'p@example.com' });

    await fresh.goto(`${app.url}/documentation#/op/POST/events/checkin`);
    const view = fresh.locator('#content article[data-path="/events/checkin"][data-method="POST"]');
    await view.waitFor();
    const prefilled = JSON.parse(await view.locator('textarea').inputValue());
    t.notOk('eventId' in prefilled || 'listId' in prefilled, 'the example\'s made-up event and list are left out');
    t.ok(prefilled.code, 'the code is there to replace');
    await view.locator('textarea').fill(JSON.stringify({ ...prefilled, code: ticket.data.number }));
    await view.locator('button.send').click();
    await view.locator('.status').waitFor();
    t.equal(await view.locator('.status').getAttribute('data-status'), '200');
    t.match(JSON.parse((await view.locator('pre.body').textContent()) ?? '{}'), { success: true, ticket: { sk: ticket.sk } });
    await fresh.close();
  });

  t.test('the socket channels are rendered like the REST sections', async (t) => {
    await page.click('nav a[data-view="channels"]');
    await page.waitForURL(/#\/channels$/);
    await content.locator('.event[data-event="sendMessage"]').first().waitFor();
    t.ok(await content.locator('.event[data-event="authenticate"]').count());
    t.ok(await content.locator('.event[data-event="getOnlineUsers"]').count());
  });

  t.test('a phone: 390 px wide, nothing scrolls sideways', async (t) => {
    const phone = await browser.newPage({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
    watch(phone);
    for (const [hash, name] of [['#/', 'phone-landing'], ['#/op/POST/events/checkin', 'phone-operation'], ['#/channels', 'phone-channels']]) {
      await phone.goto(`${app.url}/documentation${hash}`);
      await phone.locator('#content h1, #content article').first().waitFor();
      const wide = await phone.evaluate<number>('document.documentElement.scrollWidth');
      t.ok(wide <= 390, `${hash}: the page is ${wide} px wide`);
      await phone.screenshot({ path: join(shots, `${name}.png`), fullPage: false });
    }
    await phone.locator('#filter').pressSequentially('sign up');
    await phone.waitForSelector('#search-summary[data-query="sign up"]');
    t.match(await phone.locator('#content .oplist a').first().getAttribute('data-path'), /\/signup$/, '"sign up" finds the sign-up first');
    t.ok((await phone.evaluate<number>('document.documentElement.scrollWidth')) <= 390, 'search results fit too');
    await phone.screenshot({ path: join(shots, 'phone-search.png'), fullPage: false });
    await phone.close();
  });

  t.test('no console errors on the way', async (t) => {
    t.same(errors, []);
    t.ok(existsSync(join(shots, 'landing.png')), `screenshots in ${shots}`);
  });
});
