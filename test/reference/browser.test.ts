// A real browser against the reference page: headless Chromium (Debian package `chromium`,
// installed by .ci/run) driven by playwright-core.
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import t from 'tap';
import { createOrg, startTestApp, tempDir } from '../helpers/app.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

t.test('reference page - opens a section, runs a request and shows the answer', async (t) => {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`Chromium not found at ${CHROMIUM}: install the Debian package chromium (apt-get install -y chromium) or set CHROMIUM_PATH`);
  }
  const app = await startTestApp(t);
  await createOrg(app, 'acme');
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  t.teardown(() => browser.close());
  const page = await browser.newPage();
  const requests: string[] = [];
  page.on('request', (r) => requests.push(new URL(r.url()).pathname));
  await page.goto(`${app.url}/documentation`);
  await page.waitForSelector('nav button[data-slug="operations"]');
  const counts = await page.textContent('#counts');
  t.match(counts, new RegExp(`${app.deps.routes.length} endpoints in \\d+ sections`), 'the page says what it lists');
  t.notOk(requests.some((p) => p.startsWith('/documentation/tag/')), 'no section loaded before one is chosen');

  await page.click('nav button[data-slug="operations"]');
  const card = page.locator('.endpoint[data-path="/healthz"]');
  await card.waitFor();
  t.ok(requests.includes('/documentation/tag/operations.json'), 'the section was loaded on demand');
  await page.fill('#orgid', 'acme');
  await card.locator('h3').click();
  await card.locator('button.send').click();
  const status = card.locator('.status');
  await status.waitFor();
  t.equal(await status.getAttribute('data-status'), '200');
  t.match(await card.locator('pre.body').textContent(), /"status": "ok"/);
  t.match(await card.locator('pre.headers').textContent(), /content-type: application\/json/);

  const dir = join(tempDir(t, 'bp-shot-'), 'shots');
  mkdirSync(dir, { recursive: true });
  const shot = join(dir, 'documentation.png');
  await page.screenshot({ path: shot, fullPage: true });
  t.ok(existsSync(shot), `screenshot saved at ${shot}`);
  if (process.env.KEEP_SCREENSHOT) await page.screenshot({ path: process.env.KEEP_SCREENSHOT, fullPage: true });
});
