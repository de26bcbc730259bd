/**
 * The console's Egress page (the operator's alone) in real headless Chromium against the whole service: every
 * destination site of the rules file and of the state the workers write (rows inserted here as they write them),
 * a suspended or throttled site standing out with until when and its last replies, the pools with today's
 * warm-up use; Resume lifting a site's hold (checked through the management API); a rules file that does not
 * parse shown as refused. An account's session has no Egress page. After each test: no request left loopback,
 * and the page logged no error.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import postgres from 'postgres';
import type { Locator, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { admin } from '../helpers/admin-fixtures.js';
import { seedEgressState } from '../helpers/egress-rows.js';
import { ADMIN_TOKEN, startStack, type Stack } from '../helpers/stack.js';
import { launchConsoleBrowser, signInToConsole, type ConsoleBrowser } from './browser.js';

const today = new Date().toISOString().slice(0, 10);
const RULES = `
[default]
connection_limit = 3
rate = "600/min"

[site.google]
mx = ["*.google.com"]
connection_limit = 5
rate = "1000/min"

[site.yahoo]
mx = ["*.yahoodns.net"]

[pool.bulk]
streams = ["broadcast"]
[[pool.bulk.source]]
address = "127.0.0.3"
ehlo = "mta3.example.com"
warmup = { start = "${today}", daily = [50, 100] }
`;

let dir: string;
let rulesPath: string;
let stack: Stack;
let browser: ConsoleBrowser;
let page: Page;
let db: postgres.Sql;

beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'egress-console-'));
  rulesPath = path.join(dir, 'egress-rules.toml');
  await fs.writeFile(rulesPath, RULES);
  [stack, browser] = await Promise.all([
    startStack({ MAILER_EGRESS_RULES: rulesPath, LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'error' }),
    launchConsoleBrowser(),
  ]);
  page = browser.page;
  db = postgres(stack.databaseUrl, { max: 2, onnotice: () => {} });
});
afterAll(async () => {
  await db?.end();
  await browser?.close();
  await stack?.stop();
  await fs.rm(dir, { recursive: true, force: true });
});
afterEach(() => {
  expect(browser.external, 'requests that left loopback').toEqual([]);
  expect(browser.takeErrors(), 'errors logged by the page').toEqual([]);
});

/** Two sites held (one with 2 connections open), and a warm-up allowance in use. */
const seedState = (): Promise<void> => seedEgressState(db, 2);

const sites = (): Locator => page.getByRole('table', { name: 'Destination sites' });
/** A site's row, by the name in its header cell. */
const siteRow = (name: string): Locator =>
  sites()
    .locator('tbody tr')
    .filter({ has: page.getByRole('rowheader', { name: new RegExp(`^${name}\\b`) }) });
const cells = async (row: Locator) => (await row.locator('th, td').allInnerTexts()).map((t) => t.trim());

describe('the Egress page', () => {
  it('shows every site with its state, rate, connections and last replies, and the pools', async () => {
    await seedState();
    await signInToConsole(page, `${stack.mailer.restUrl}`, ADMIN_TOKEN, 'Accounts');
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Egress' }).click();
    await page.getByRole('heading', { level: 1, name: 'Egress' }).waitFor();
    expect(page.url()).toMatch(/#\/egress$/);

    expect(await page.locator('main').innerText()).toContain(`Read from ${rulesPath}.`);
    expect(await page.getByRole('status').filter({ hasText: 'sites held' }).innerText()).toBe(
      '2 of 3 sites held: google suspended, outlook.com throttled.',
    );
    expect(await sites().locator('tbody th').allInnerTexts()).toEqual([
      expect.stringMatching(/^google/),
      'outlook.com',
      expect.stringMatching(/^yahoo/),
    ]);

    const google = await cells(siteRow('google'));
    expect(google[0]).toBe('google\n*.google.com');
    expect(google[1]).toMatch(/^suspended\nuntil /);
    expect(google.slice(2, 5)).toEqual(['1000/min', '1 / 5', '9']);
    expect(google[5]).toMatch(/^421 4\.7\.28 unusual rate of unsolicited mail → suspend \(from 127\.0\.0\.3\)/);
    expect(await siteRow('google').locator('.pill').getAttribute('class')).toBe('pill bad');
    // The whole row of a held site is tinted; a site sending normally is not.
    // The page's own getComputedStyle (the tests are compiled without the DOM's types).
    type Styled = { getComputedStyle(el: unknown): { backgroundColor: string } };
    const background = (name: string) =>
      siteRow(name).evaluate((row) => (globalThis as unknown as Styled).getComputedStyle(row).backgroundColor);
    expect(await background('google')).not.toBe(await background('yahoo'));
    expect(await background('outlook.com')).not.toBe(await background('yahoo'));
    expect(await background('google')).not.toBe(await background('outlook.com'));

    const outlook = await cells(siteRow('outlook.com'));
    expect(outlook[1]).toMatch(/^throttled\nuntil /);
    expect(outlook.slice(2, 6)).toEqual(['60/min (configured 600/min)', '2 / 3', '0', '—']);
    expect(await siteRow('outlook.com').locator('strong').innerText()).toBe('60/min');
    expect(await siteRow('outlook.com').locator('.pill').getAttribute('class')).toBe('pill warn');

    // A site of the file nobody has sent to: its shape, nothing held, nothing to resume.
    expect((await cells(siteRow('yahoo'))).slice(1, 5)).toEqual(['ok', '600/min', '0 / 3', '0']);
    expect(await siteRow('yahoo').getByRole('button').count()).toBe(0);

    const pools = page.getByRole('table', { name: /Source addresses by pool/ });
    expect(await cells(pools.locator('tbody tr').first())).toEqual([
      'bulk',
      '127.0.0.3',
      'mta3.example.com',
      'broadcast',
      '7 of 50',
    ]);
    await browser.screenshot('egress');
  });

  it('resumes a held site: the hold ends for every worker, and the row reads ok', async () => {
    await siteRow('google').getByRole('button', { name: 'Resume google' }).click();
    const dialog = page.getByRole('dialog', { name: 'Resume google?' });
    await dialog.getByRole('button', { name: 'Resume' }).click();
    await expect.poll(() => page.locator('#status').innerText()).toBe('google resumed.');
    await expect.poll(async () => (await cells(siteRow('google')))[1]).toBe('ok');
    expect(await siteRow('google').getByRole('button').count()).toBe(0);
    const status = await admin<{ sites: { site: string; suspended_until: string }[] }>(stack, 'GET', '/egress');
    expect(status.body.sites.find((s) => s.site === 'google')?.suspended_until).toBe('');
    const [row] = await db<{ suspended_until: Date | null }[]>`
      select suspended_until from egress_sites where site = 'google'`;
    expect(row?.suspended_until).toBeNull();
    // The other site is still held.
    expect((await cells(siteRow('outlook.com')))[1]).toMatch(/^throttled/);
  });

  it('shows a rules file that does not parse as refused, the sites still listed', async () => {
    try {
      await fs.writeFile(rulesPath, `${RULES}\n[site.broken]\nspeed = 3\n`);
      await page.getByRole('button', { name: 'Refresh' }).click();
      const alert = page.getByRole('alert').filter({ hasText: 'rules file is refused' });
      await alert.waitFor();
      expect(await alert.innerText()).toMatch(/site\.broken.*speed/);
      expect(await siteRow('outlook.com').count()).toBe(1);
    } finally {
      await fs.writeFile(rulesPath, RULES);
    }
    await page.getByRole('button', { name: 'Refresh' }).click();
    await expect.poll(() => page.getByRole('alert').filter({ hasText: 'rules file is refused' }).count()).toBe(0);
  });
});

describe("an account's session", () => {
  it('has no Egress link, and is sent home from the page', async () => {
    await page.locator('#sign-out').click();
    await page.getByRole('heading', { level: 1, name: /Sign in/ }).waitFor();
    const account = await admin<{ name: string }>(stack, 'GET', `/accounts/${stack.accountId}`);
    await signInToConsole(page, `${stack.mailer.restUrl}`, stack.apiKey, account.body.name);
    const home = page.url();
    const nav = page.getByRole('navigation', { name: 'Console' });
    expect(await nav.getByRole('link', { name: 'Egress' }).isVisible()).toBe(false);
    await page.goto('about:blank');
    await page.goto(`${stack.mailer.restUrl}/console#/egress`);
    await expect.poll(() => page.url()).toBe(home);
    expect(await page.getByRole('heading', { level: 1, name: 'Egress' }).count()).toBe(0);
  });
});
