/**
 * The console's API keys page in real headless Chromium against the whole service: a key made with its own rate
 * limit, daily quota and expiry (issue 27, "Limits per key"), shown with them and with its usage once it sends.
 * What the page did is checked through the management API. After each test: no request left loopback, and the
 * page logged no error it was not expected to.
 */
import type { Locator, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { admin } from '../helpers/admin-fixtures.js';
import { call, validEmail } from '../helpers/http.js';
import { ADMIN_TOKEN, startStack, type Stack } from '../helpers/stack.js';
import { launchConsoleBrowser, type ConsoleBrowser } from './browser.js';

let stack: Stack;
let browser: ConsoleBrowser;
let page: Page;

beforeAll(async () => {
  [stack, browser] = await Promise.all([
    startStack({ LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'error' }),
    launchConsoleBrowser(),
  ]);
  page = browser.page;
  await page.goto(`${stack.mailer.restUrl}/console`);
  const token = page.getByLabel(/Admin token/);
  await token.fill(ADMIN_TOKEN);
  await token.locator('xpath=ancestor::form').locator('button[type=submit]').click();
  await page.getByRole('heading', { level: 1, name: 'Accounts' }).waitFor();
});
afterAll(async () => {
  await browser?.close();
  await stack?.stop();
});
afterEach(() => {
  expect(browser.external, 'requests that left loopback').toEqual([]);
  expect(browser.takeErrors(), 'errors logged by the page').toEqual([]);
});

/** Opens a console view by its hash route and waits for a heading of its own. */
async function open(route: string, heading: string | RegExp, level = 2): Promise<void> {
  await page.goto('about:blank');
  await page.goto(`${stack.mailer.restUrl}/console#${route}`);
  await page.getByRole('heading', { level, name: heading }).waitFor();
}

const row = (text: string): Locator => page.locator('table.data tbody tr', { hasText: text });

type ListedKey = {
  id: string;
  name: string;
  rate_limit?: number;
  daily_quota?: number;
  expires_at?: string;
  last_used_at?: string;
  usage: { request_count: number; email_sent_count: number; sent_today: number };
};

describe('console API keys', () => {
  it("creates a key with a rate limit, daily quota and expiry, and shows them with the key's usage", async () => {
    await open(`/accounts/${stack.accountId}/api-keys`, /default/, 1);
    await page.getByLabel('Name', { exact: true }).fill('limited');
    await page.getByLabel('Permission').selectOption('send_only');
    await page.getByLabel('Rate limit (requests per second)').fill('3');
    await page.getByLabel('Daily quota (emails per UTC day)').fill('5');
    // Tomorrow at 09:30 in the browser's time zone, as a person picks it.
    const tomorrow = new Date(Date.now() + 86_400_000);
    const local = `${tomorrow.getFullYear()}-${String(tomorrow.getMonth() + 1).padStart(2, '0')}-${String(tomorrow.getDate()).padStart(2, '0')}T09:30`;
    await page.getByLabel('Expires').fill(local);
    const expiresAt = await page.evaluate((v) => new Date(v).toISOString(), local);
    await page.getByRole('button', { name: 'Create key' }).click();

    const dialog = page.getByRole('dialog', { name: 'API key limited' });
    const key = await dialog.getByLabel('API key', { exact: true }).inputValue();
    expect(key).toMatch(/^mk_/);
    await dialog.getByRole('button', { name: 'I have copied it' }).click();
    await expect.poll(() => page.locator('dialog').count()).toBe(0);

    // The service has the key's limits as the form gave them.
    const listed = await admin<{ api_keys: ListedKey[] }>(stack, 'GET', `/accounts/${stack.accountId}/api-keys`);
    const made = listed.body.api_keys.find((k) => k.name === 'limited')!;
    expect(made).toMatchObject({ rate_limit: 3, daily_quota: 5, expires_at: expiresAt });
    expect(made.last_used_at).toBeUndefined();

    // Before it is used: its limits and expiry, never used, nothing sent today.
    const fresh = row('limited');
    await fresh.waitFor();
    const before = await fresh.locator('td').allInnerTexts();
    expect(before.slice(4, 8)).toEqual(['0.00 %', '3/s', '0 / 5 today', expect.not.stringMatching(/never/)]);
    expect(before[8]).toBe('never');

    // Two emails with the key, then the page again: they count against its own quota.
    for (let i = 0; i < 2; i++) {
      const sent = await call('POST', `${stack.api}/emails`, {
        token: key,
        body: validEmail({ subject: `limited ${i}` }),
      });
      expect(sent.status, sent.text).toBe(200);
    }
    await page.reload();
    const used = row('limited');
    await used.waitFor();
    const cells = await used.locator('td').allInnerTexts();
    // (The name is the row's header cell.) Permission, allowed domains, requests, emails sent, error rate, rate limit,
    // daily quota.
    expect(cells.slice(0, 7)).toEqual(['send_only', 'any verified domain', '2', '2', '0.00 %', '3/s', '2 / 5 today']);
    expect(cells[7]).not.toMatch(/never|expired/);
    expect(cells[8]).not.toBe('never');
    // The account's own key has no limits of its own: the account's and the service's apply.
    const own = await page
      .locator('table.data tbody tr')
      .filter({ hasNotText: 'limited' })
      .first()
      .locator('td')
      .allInnerTexts();
    expect(own.slice(5, 8)).toEqual(["service's", "account's", 'never']);
    await browser.screenshot('api-keys-limits');
  });
});
