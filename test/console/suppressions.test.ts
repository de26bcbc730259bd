/**
 * The console's suppression page and compliance figures in real headless Chromium against the whole service:
 * searching the list, adding and removing a suppression, importing a CSV file (its bad rows shown by line) and
 * exporting the list as a downloaded CSV; each stream's complaint and unsubscribe rates on the account's overview
 * with the 0.3 % line drawn, from a real complaint and a real one-click unsubscribe; each domain's DMARC policy,
 * found by the DNS check in a real DNS server. What the page did is checked through the management API.
 * After each test: no request left loopback, and the page logged no error it was not expected to.
 */
import fs from 'node:fs/promises';
import type { Locator, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createUnsubscribeTokens } from '../../src/delivery/message/unsubscribe-token.js';
import { admin } from '../helpers/admin-fixtures.js';
import { startDnsServer, type DnsServer } from '../helpers/dns-server.js';
import { call, eventually } from '../helpers/http.js';
import { ADMIN_TOKEN, startStack, type Stack } from '../helpers/stack.js';
import { trackingKeyOf } from '../helpers/stack-secrets.js';
import { launchConsoleBrowser, type ConsoleBrowser } from './browser.js';

let zone: DnsServer;
let stack: Stack;
let browser: ConsoleBrowser;
let page: Page;

type Suppression = { id: string; email_address: string; reason: string; scope: string; topic: string | null };

beforeAll(async () => {
  zone = await startDnsServer();
  [stack, browser] = await Promise.all([
    // The built-in catcher delivers (no SMTP_URL), and its simulator mails a complaint back; DNS from `zone`.
    startStack({
      SMTP_URL: '',
      MAILER_CATCHER_PORT: '0',
      MAILER_DNS_SERVERS: zone.servers,
      LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'error',
    }),
    launchConsoleBrowser(),
  ]);
  page = browser.page;
  await page.goto(`${stack.mailer.restUrl}/console`);
  await page.getByLabel('Admin token').fill(ADMIN_TOKEN);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { level: 1, name: 'Accounts' }).waitFor();
});
afterAll(async () => {
  await browser?.close();
  await stack?.stop();
  await zone?.close();
});
afterEach(() => {
  expect(browser.external, 'requests that left loopback').toEqual([]);
  expect(browser.takeErrors(), 'errors logged by the page').toEqual([]);
});

const suppressionsPath = () => `/accounts/${stack.accountId}/suppressions`;
/** The account's suppressions through the management API. */
const suppressions = async (query = '') =>
  (await admin<{ suppressions: Suppression[]; total: number }>(stack, 'GET', `${suppressionsPath()}${query}`)).body;

/** Opens a console view by its hash route and waits for a heading of its own. */
async function open(route: string, heading: string | RegExp, level = 2): Promise<void> {
  // From a blank page, so that opening the route already shown loads it afresh too.
  await page.goto('about:blank');
  await page.goto(`${stack.mailer.restUrl}/console#${route}`);
  await page.getByRole('heading', { level, name: heading }).waitFor();
}

const listRows = (): Locator => page.locator('.suppression-list table.data tbody tr');
/** The suppression list's addresses, as shown, in order. */
const listed = () => page.locator('.suppression-list table.data tbody th').allInnerTexts();
const row = (text: string): Locator => listRows().filter({ hasText: text });
const search = () => page.getByRole('search', { name: 'Search suppressions' });
const addForm = () => page.getByRole('form', { name: 'Add a suppression' });
/** The console logs a refused request; these tests expect exactly the ones they provoke. */
const refused = (status: number) => expect.stringContaining(`the server responded with a status of ${status}`);

describe('compliance at a glance', () => {
  it("shows each stream's 7-day complaint and unsubscribe rates on the overview, the 0.3 % line drawn", async () => {
    const send = async (body: Record<string, unknown>) => {
      const res = await call('POST', `${stack.api}/emails`, {
        token: stack.apiKey,
        body: { from: 'news@example.com', subject: 'News', text: 'hi', ...body },
      });
      expect(res.status, res.text).toBe(200);
      return res.body.id as string;
    };
    const statusOf = async (id: string) =>
      (await call('GET', `${stack.api}/emails/${id}`, { token: stack.apiKey })).body.status;
    const transactional = await send({ to: ['success@simulator.mailer.test'] });
    const complained = await send({ to: ['complaint@simulator.mailer.test'], stream: 'broadcast' });
    const unsubscribed = await send({
      to: ['success+reader@simulator.mailer.test'],
      stream: 'broadcast',
      topic: 'news',
    });
    await eventually(async () => (await statusOf(complained)) === 'complained', 30_000);
    for (const id of [transactional, unsubscribed]) await eventually(async () => (await statusOf(id)) === 'delivered');
    // A real one-click unsubscribe of the third email.
    const token = createUnsubscribeTokens(await trackingKeyOf(stack.mailer)).sign(unsubscribed);
    const posted = await fetch(`${stack.mailer.restUrl}/u/${token}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'List-Unsubscribe=One-Click',
    });
    expect(posted.status).toBe(200);

    await open(`/accounts/${stack.accountId}/overview`, 'Compliance, last 7 days');
    const table = page.getByRole('table', { name: /Complaint and unsubscribe rates per stream, last 7 days/ });
    // Their text (the style shows headers in capitals).
    expect(await table.locator('thead th').allTextContents()).toEqual([
      'Stream',
      'Sent',
      'Complaints',
      'Complaint rate (line at 0.3 %)',
      'Unsubscribes',
      'Unsubscribe rate',
    ]);
    const cells = async (stream: string) =>
      (await table.locator(`tr[data-stream="${stream}"]`).locator('th, td').allInnerTexts()).map((t) => t.trim());
    // Under the line and over it, in words; broadcast mail is judged on its own.
    expect(await cells('transactional')).toEqual(['Transactional', '1', '0', '0.00 %', '0', '0.00 %']);
    expect(await cells('broadcast')).toEqual(['Broadcast', '2', '1', '50.00 % (at or over 0.3 %)', '1', '50.00 %']);

    // The bars repeat the words (hidden from screen readers); one scale, the line on each complaint bar.
    const bar = (stream: string, column: string) => table.locator(`tr[data-stream="${stream}"] td.${column} .rate-bar`);
    const style = (l: Locator, prop: 'width' | 'left') =>
      l.evaluate((el, p) => (el as unknown as { style: Record<string, string> }).style[p], prop);
    expect(await bar('broadcast', 'complaint-rate').getAttribute('aria-hidden')).toBe('true');
    expect(await bar('broadcast', 'complaint-rate').getAttribute('class')).toBe('rate-bar over');
    expect(await bar('transactional', 'complaint-rate').getAttribute('class')).toBe('rate-bar');
    // The scale runs to the highest rate (50 %): the 0.3 % line at 0.6 % of it, the 50 % bars full.
    expect(await style(bar('broadcast', 'complaint-rate').locator('.rate-fill'), 'width')).toBe('100%');
    expect(await style(bar('broadcast', 'complaint-rate').locator('.rate-limit'), 'left')).toBe('0.6%');
    expect(await style(bar('transactional', 'complaint-rate').locator('.rate-limit'), 'left')).toBe('0.6%');
    expect(await style(bar('transactional', 'complaint-rate').locator('.rate-fill'), 'width')).toBe('0%');
    // No complaint line on an unsubscribe rate.
    expect(await bar('broadcast', 'unsubscribe-rate').locator('.rate-limit').count()).toBe(0);
    await browser.screenshot('compliance');
  });

  it('shows whether each domain publishes DMARC, and its policy, as the DNS check found it', async () => {
    zone.set('_dmarc.own.example', 'TXT', ['v=DMARC1; p=reject; rua=mailto:d@own.example']);
    const domain = (
      await admin<{ id: string }>(stack, 'POST', `/accounts/${stack.accountId}/domains`, { name: 'own.example' })
    ).body;
    await admin(stack, 'POST', `/domains/${domain.id}/verify`, {});

    await open(`/accounts/${stack.accountId}/domains`, /own\.example/);
    const card = (name: string) => page.locator(`section.card[data-domain="${name}"] .dmarc-line`);
    expect(await card('own.example').innerText()).toBe('DMARC p=reject Found at _dmarc.own.example');
    expect(await card('example.com').innerText()).toBe(
      'DMARC not published Gmail and Yahoo require bulk senders to publish a DMARC policy.',
    );
  });
});

describe('console suppressions', () => {
  it('lists the suppressions with their reason, scope and topic, and searches them', async () => {
    await admin(stack, 'POST', suppressionsPath(), { email: 'ann@example.net' });
    await admin(stack, 'POST', suppressionsPath(), { email: 'bob@example.org', scope: 'broadcast' });

    await open(`/accounts/${stack.accountId}`, /./, 1);
    await page
      .getByRole('navigation', { name: 'Account sections' })
      .getByRole('link', { name: 'Suppressions' })
      .click();
    await page.getByRole('heading', { level: 2, name: 'Suppressions' }).waitFor();
    expect(await page.locator('.list-count').innerText()).toBe('4 suppressions.');
    // Newest first: the two added, then the unsubscribe and the complaint of the compliance test.
    expect(await listed()).toEqual([
      'bob@example.org',
      'ann@example.net',
      'success+reader@simulator.mailer.test',
      'complaint@simulator.mailer.test',
    ]);
    const cells = async (text: string) => (await row(text).locator('th, td').allInnerTexts()).slice(0, 4);
    expect(await cells('success+reader')).toEqual([
      'success+reader@simulator.mailer.test',
      'unsubscribe',
      'Broadcast, one topic',
      'news',
    ]);
    expect(await cells('bob@')).toEqual(['bob@example.org', 'manual', 'Broadcast, every topic', '—']);
    expect(await cells('ann@')).toEqual(['ann@example.net', 'manual', 'All mail', '—']);
    expect(await row('complaint@').locator('td').nth(0).innerText()).toBe('complaint');
    // The complaint names its email, linked.
    expect(await row('complaint@').getByRole('link').count()).toBe(1);
    await browser.screenshot('suppressions');

    // By a part of the address.
    await search().getByLabel('Address').fill('simulator');
    await search().getByRole('button', { name: 'Search' }).click();
    await expect.poll(listed).toEqual(['success+reader@simulator.mailer.test', 'complaint@simulator.mailer.test']);
    expect(page.url()).toContain('email=simulator');
    expect(await page.locator('.list-count').innerText()).toBe('2 suppressions match.');
    // And a reason.
    await search().getByLabel('Reason').selectOption('complaint');
    await search().getByRole('button', { name: 'Search' }).click();
    await expect.poll(listed).toEqual(['complaint@simulator.mailer.test']);
    // Scope, from a fresh search.
    await search().getByRole('link', { name: 'Clear' }).click();
    await expect.poll(async () => (await listed()).length).toBe(4);
    await search().getByLabel('Scope').selectOption('broadcast');
    await search().getByRole('button', { name: 'Search' }).click();
    await expect.poll(listed).toEqual(['bob@example.org', 'success+reader@simulator.mailer.test']);
    // Topic.
    await search().getByLabel('Topic').fill('news');
    await search().getByRole('button', { name: 'Search' }).click();
    await expect.poll(listed).toEqual(['success+reader@simulator.mailer.test']);
    // Nothing matches: said in words.
    await search().getByLabel('Address').fill('nobody');
    await search().getByRole('button', { name: 'Search' }).click();
    await page.getByText('No suppressions match.').waitFor();
    // A reload shows the same search (it is in the URL).
    await page.reload();
    await page.getByText('No suppressions match.').waitFor();
    expect(await search().getByLabel('Topic').inputValue()).toBe('news');
  });

  it('adds a suppression, its topic only with scope broadcast, and shows a refusal beside the form', async () => {
    await open(suppressionsPath(), 'Suppressions');
    const topic = addForm().getByLabel('Topic (optional)');
    expect(await topic.isDisabled()).toBe(true);
    await addForm().getByLabel('Address').fill('Dee@Example.NET');
    await addForm().getByLabel('Scope').selectOption('broadcast');
    expect(await topic.isDisabled()).toBe(false);
    await topic.fill('offers');
    await addForm().getByRole('button', { name: 'Add suppression' }).click();
    await expect.poll(() => row('dee@example.net').count()).toBe(1);
    expect((await row('dee@example.net').locator('th, td').allInnerTexts()).slice(0, 4)).toEqual([
      'dee@example.net',
      'manual',
      'Broadcast, one topic',
      'offers',
    ]);
    expect(await page.locator('#status').innerText()).toBe(
      'dee@example.net suppressed (broadcast, one topic: offers).',
    );
    expect((await suppressions('?email=dee@example.net')).suppressions).toMatchObject([
      { email_address: 'dee@example.net', reason: 'manual', scope: 'broadcast', topic: 'offers' },
    ]);

    // The service's refusal, shown beside the form; nothing stored.
    await addForm().getByLabel('Address').fill('Dee <dee@example.net>');
    await addForm().getByRole('button', { name: 'Add suppression' }).click();
    const error = addForm().locator('.form-error');
    await expect.poll(() => error.innerText()).toMatch(/^email must be a bare address/);
    expect(await addForm().getByLabel('Address').getAttribute('aria-invalid')).toBe('true');
    expect(browser.takeErrors()).toEqual([refused(400)]);
    expect((await suppressions()).total).toBe(5);
  });

  it('removes a suppression only once the operator confirms', async () => {
    await open(suppressionsPath(), 'Suppressions');
    const remove = page.getByRole('button', { name: 'Remove dee@example.net (topic offers)' });
    await remove.click();
    const dialog = page.getByRole('dialog', { name: 'Send to dee@example.net again?' });
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'detached' });
    expect((await suppressions('?email=dee@example.net')).total).toBe(1);

    await remove.click();
    await dialog.getByRole('button', { name: 'Remove suppression' }).click();
    await expect.poll(() => row('dee@example.net').count()).toBe(0);
    expect((await suppressions('?email=dee@example.net')).total).toBe(0);
  });

  it('imports a CSV file: the rows imported and skipped counted, a bad row shown by its line, as text', async () => {
    await open(suppressionsPath(), 'Suppressions');
    const csv = [
      'email,scope,topic',
      'eve@example.net,,',
      'ann@example.net,,',
      // A bad scope, whose value the service repeats in its message: shown as text, not markup.
      'fay@example.net,<img src=x id=injected>,',
      'not an address,,',
      'gus@example.net,broadcast,weekly',
    ].join('\r\n');
    await page.getByLabel('CSV file', { exact: true }).setInputFiles({
      name: 'list.csv',
      mimeType: 'text/csv',
      buffer: Buffer.from(`${csv}\r\n`),
    });
    await page.getByRole('button', { name: 'Import', exact: true }).click();
    const result = page.locator('.import-result');
    await expect
      .poll(() =>
        result
          .locator('dd.imported')
          .innerText()
          .catch(() => ''),
      )
      .toBe('2');
    expect(await result.locator('dd.skipped').innerText()).toBe('1');
    expect(await result.locator('dd.refused').innerText()).toBe('2');
    const errors = result.getByRole('table', { name: /^Rows of list\.csv not imported, by line/ });
    const lines = await errors
      .locator('tbody tr')
      .evaluateAll((rows) => rows.map((r) => [...r.children].map((c) => (c.textContent ?? '').trim())));
    expect(lines.map(([line]) => line)).toEqual(['4', '5']);
    expect(lines[0]![1]).toContain('<img src=x id=injected>');
    expect(lines[1]![1]).toMatch(/^email /);
    expect(await page.locator('#injected').count()).toBe(0);
    await browser.screenshot('suppressions-import');

    // The list shows what was imported; the service has it.
    await expect.poll(() => row('gus@example.net').count()).toBe(1);
    expect((await suppressions('?email=gus@example.net')).suppressions).toMatchObject([
      { reason: 'manual', scope: 'broadcast', topic: 'weekly' },
    ]);
    expect((await suppressions()).total).toBe(6);
  });

  it('exports the list as a downloaded CSV with every row', async () => {
    await open(suppressionsPath(), 'Suppressions');
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Download CSV' }).click(),
    ]);
    expect(download.suggestedFilename()).toBe(`suppressions-${stack.accountId}.csv`);
    const text = await fs.readFile((await download.path())!, 'utf8');
    const [header, ...rows] = text.trim().split('\r\n');
    expect(header).toBe('email,reason,scope,topic,created_at');
    expect(rows.map((r) => r.split(',').slice(0, 4).join(',')).sort()).toEqual([
      'ann@example.net,manual,all,',
      'bob@example.org,manual,broadcast,',
      'complaint@simulator.mailer.test,complaint,all,',
      'eve@example.net,manual,all,',
      'gus@example.net,manual,broadcast,weekly',
      'success+reader@simulator.mailer.test,unsubscribe,broadcast,news',
    ]);
    // The same as the management API's export.
    const viaApi = await call('GET', `${stack.admin}${suppressionsPath()}/export`, { token: ADMIN_TOKEN });
    expect(text).toBe(viaApi.text);
  });
});
