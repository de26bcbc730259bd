/**
 * The console's Stats tab in real headless Chromium against the whole service: recipients per day as a chart,
 * the per-recipient-domain table whose bounce rate and sample replies show what a receiver is doing, and the
 * other groupings; for the operator (management API) and for the account itself (its API key, GET /stats).
 * The mail is written into the database as delivery records it, so every number on the page is known.
 * After each test: no request left loopback, and the page logged no error.
 */
import postgres from 'postgres';
import type { Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../src/ids.js';
import { ADMIN_TOKEN, startStack, type Stack } from '../helpers/stack.js';
import { launchConsoleBrowser, type ConsoleBrowser } from './browser.js';

let stack: Stack;
let browser: ConsoleBrowser;
let page: Page;
let db: postgres.Sql;

beforeAll(async () => {
  [stack, browser] = await Promise.all([
    startStack({ LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'error' }),
    launchConsoleBrowser(),
  ]);
  page = browser.page;
  db = postgres(stack.databaseUrl, { max: 2, onnotice: () => {} });
  await seedMail(stack.accountId);
});
afterAll(async () => {
  await db?.end();
  await browser?.close();
  await stack?.stop();
});
afterEach(() => {
  expect(browser.external, 'requests that left loopback').toEqual([]);
  expect(browser.takeErrors(), 'errors logged by the page').toEqual([]);
});

async function insertEmail(accountId: string, to: string[], tags: Record<string, string>, status = 'delivered') {
  const id = newId('email');
  const mailboxes = {
    from: { name: '', address: 'news@stats-console.test' },
    to: to.map((address) => ({ name: '', address })),
    cc: [],
    bcc: [],
    replyTo: [],
  };
  await db`
    insert into emails (id, account_id, job_type, from_address, to_addresses, subject, tags, size_bytes, status,
      header_message_id, mailboxes, sender_domain)
    values (${id}, ${accountId}, 'direct', 'news@stats-console.test', ${to}, 'Stats', ${db.json(tags)}, 100, ${status},
      ${`<${id}@stats.test>`}, ${db.json(mailboxes)}, 'stats-console.test')`;
  return id;
}

async function event(accountId: string, emailId: string, type: string, data: Record<string, unknown> = {}) {
  await db`insert into events (id, email_id, account_id, type, data)
    values (${newId('event')}, ${emailId}, ${accountId}, ${type}, ${db.json(data as never)})`;
}

/**
 * Today: ten recipients at outlook.com, eight delivered and two bounced (20 %); two at gmail.com, both delivered
 * and one opened.
 */
async function seedMail(accountId: string): Promise<void> {
  for (let i = 0; i < 10; i += 1) {
    const rcpt = `o${i}@outlook.com`;
    const e = await insertEmail(accountId, [rcpt], { campaign: 'welcome' });
    await event(accountId, e, 'send');
    if (i < 8) await event(accountId, e, 'delivery', { recipients: [rcpt], smtp_response: '250 ok' });
    else
      await event(accountId, e, 'bounce', {
        bounce_type: 'Transient',
        bounce_subtype: 'General',
        bounced_recipients: [
          { email_address: rcpt, status: '5.7.1', diagnostic_code: `550 5.7.1 ${rcpt} blocked using Spamhaus` },
        ],
      });
  }
  const g = await insertEmail(accountId, ['a@gmail.com', 'b@gmail.com'], { campaign: 'receipt' });
  await event(accountId, g, 'send');
  await event(accountId, g, 'delivery', { recipients: ['a@gmail.com', 'b@gmail.com'], smtp_response: '250 ok' });
  await event(accountId, g, 'open');
}

const statsPath = () => `/accounts/${stack.accountId}/stats`;
/** The grouping's table (the chart has a table of its own, in a closed disclosure). */
const grouped = () => page.locator('section.card', { has: page.locator('h2', { hasText: /^By / }) });
const row = (text: string) => grouped().locator('table.data tbody tr', { hasText: text });
const keys = () => grouped().locator('table.data tbody tr th').allInnerTexts();

/** Opens a console view by its hash route and waits for a heading of its own. */
async function open(route: string, heading: string | RegExp): Promise<void> {
  await page.goto('about:blank');
  await page.goto(`${stack.mailer.restUrl}/console#${route}`);
  await page.getByRole('heading', { level: 2, name: heading }).waitFor();
}

async function signIn(credential: string, heading: string | RegExp): Promise<void> {
  await page.goto(`${stack.mailer.restUrl}/console`);
  await page.getByLabel(/Admin token/).fill(credential);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { level: 1, name: heading }).waitFor();
}

/** What the page shows of the outlook.com and gmail.com rows, cell by cell. */
async function expectDomainRows(): Promise<void> {
  const outlook = row('outlook.com');
  await expect
    .poll(() => outlook.locator('td').allInnerTexts())
    .toEqual([
      '10',
      '8 (80.00 %)',
      '2 (20.00 %)',
      '0 (0.00 %)',
      '0',
      '0',
      '0',
      '0',
      '550 5.7.1 <address> blocked using Spamhaus',
    ]);
  // A receiver refusing a fifth of the mail stands out.
  expect(await outlook.locator('strong').allInnerTexts()).toEqual(['2 (20.00 %)']);
  const gmail = await row('gmail.com').locator('td').allInnerTexts();
  expect([gmail[0], gmail[1], gmail[2], gmail[5]]).toEqual(['2', '2 (100.00 %)', '0 (0.00 %)', '1']);
  expect(await row('gmail.com').locator('strong').count()).toBe(0);
  // Biggest first.
  expect(await keys()).toEqual(['outlook.com', 'gmail.com']);
}

describe('console stats', () => {
  it("shows the operator an account's recipients per day and per recipient domain, then by tag", async () => {
    await signIn(ADMIN_TOKEN, 'Accounts');
    await open(statsPath(), 'Recipients per day');
    const chart = page.getByRole('img', { name: /Recipients accepted and their outcomes, last 30 days/ });
    await chart.waitFor();
    // 30 days, the last of them today's mail: 12 accepted, 10 delivered, 2 bounced.
    expect(await chart.locator('desc').textContent()).toMatch(
      /^30 days from .* in all: 12 accepted, 10 delivered, 2 bounced, 0 complained, 0 deferred, 1 opened, 0 clicked, 0 unsubscribed\.$/,
    );
    expect(await chart.locator('rect.series-bounced').count()).toBe(1);
    await page.getByRole('heading', { level: 2, name: 'By recipient domain' }).waitFor();
    await expectDomainRows();

    await page.getByLabel('Group by').selectOption({ label: 'Tag' });
    await page.getByRole('heading', { level: 2, name: 'By tag' }).waitFor();
    await expect.poll(keys).toEqual(['campaign=welcome', 'campaign=receipt']);
    expect(await row('campaign=welcome').locator('td').nth(2).innerText()).toBe('2 (20.00 %)');
    // The choice is in the URL: a reload shows the same view.
    expect(page.url()).toContain('group=tag');
    await page.getByLabel('Period (days)').selectOption('7');
    await page.getByRole('img', { name: /last 7 days/ }).waitFor();
    expect(page.url()).toMatch(/days=7.*group=tag|group=tag.*days=7/);
  });

  it('shows an account signed in with its own key the same numbers, from GET /stats', async () => {
    await page.context().clearCookies();
    const account = (await db<{ name: string }[]>`select name from accounts where id = ${stack.accountId}`)[0]!;
    await signIn(stack.apiKey, account.name);
    const stats: string[] = [];
    page.on('request', (r) => {
      const { pathname } = new URL(r.url());
      if (pathname.startsWith('/v1/mail/') && pathname.includes('stats')) stats.push(pathname);
    });
    await open(statsPath(), 'By recipient domain');
    await expectDomainRows();
    expect(new Set(stats)).toEqual(new Set(['/v1/mail/stats']));
  });
});
