/**
 * The web console in real headless Chromium against the whole service: sign-in, accounts, domains, keys,
 * webhooks, batches, emails, scheduled emails, suppressions, the chart and the mail catcher. The stack
 * runs in catcher mode (no SMTP_URL), so every email it sends ends in the catcher the console shows.
 * After each test: no request left loopback, and the page logged no error it was not expected to.
 */
import type { Locator, Page, Response } from 'playwright-core';
import postgres from 'postgres';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { admin } from '../helpers/admin-fixtures.js';
import { call, eventually, validEmail } from '../helpers/http.js';
import { ADMIN_TOKEN, startStack, type Stack } from '../helpers/stack.js';
import { launchConsoleBrowser, type ConsoleBrowser } from './browser.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';
import { signatureFor } from '../../src/webhooks/signature.js';

let stack: Stack;
let receiver: WebhookReceiver;
let browser: ConsoleBrowser;
let page: Page;

beforeAll(async () => {
  receiver = await startWebhookReceiver();
  [stack, browser] = await Promise.all([
    // Warnings are left out of the log: the failing endpoint's retries are logged as warnings by design.
    startStack({
      SMTP_URL: '',
      MAILER_CATCHER_PORT: '0',
      MAILER_WEBHOOK_ALLOW_PRIVATE: '1',
      LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'error',
    }),
    launchConsoleBrowser(),
  ]);
  page = browser.page;
});
afterAll(async () => {
  await browser?.close();
  await stack?.stop();
  await receiver?.close();
});
afterEach(() => {
  expect(browser.external, 'requests that left loopback').toEqual([]);
  expect(browser.takeErrors(), 'errors logged by the page').toEqual([]);
});

/** Opens a console view by its hash route and waits for its heading. */
async function open(route: string, heading: string | RegExp): Promise<void> {
  await page.goto(`${stack.mailer.restUrl}/console#${route}`);
  await page.getByRole('heading', { level: 1, name: heading }).waitFor();
}

const status = () => page.locator('#status').innerText();
/**
 * What scripts of the page can read of the session: both storages and document.cookie (the tests compile
 * without the DOM types, hence a string). The session is an HttpOnly cookie, so none of it holds a credential.
 */
const readableByScripts = () =>
  page.evaluate(
    'JSON.stringify({ session: { ...sessionStorage }, local: { ...localStorage }, cookie: document.cookie })',
  ) as Promise<string>;
/** The console's session cookie as the browser keeps it. */
const sessionCookie = async () => (await page.context().cookies()).find((c) => c.name === 'mailer_console');
/** The rows of the tables on the page that contain `text`. */
const row = (text: string): Locator => page.locator('table.data tbody tr', { hasText: text });
/** Reads something from every element a locator matches, in order. */
const each = async (locator: Locator, read: (l: Locator) => Promise<string | null>) =>
  Promise.all((await locator.all()).map(read));

/** A webhook's deliveries through the management API, to wait for the service before looking at the page. */
const deliveries = async (webhookId: string) =>
  (await admin<{ deliveries: { status: string }[] }>(stack, 'GET', `/webhooks/${webhookId}/deliveries`)).body
    .deliveries;
/** The first row of the deliveries table with this status (not a row of an attempts table). */
const deliveryRow = (deliveryStatus: string): Locator =>
  page.locator('tr', { hasText: deliveryStatus, has: page.locator('button.disclosure') }).first();
/** The rows of the attempts table a disclosure button opens. */
const attemptRows = async (toggle: Locator): Promise<Locator> =>
  page.locator(`[id="${await toggle.getAttribute('aria-controls')}"] tbody tr`);

/** Shared between the tests, which run in order like an operator's session. */
const state = { accountId: '', webhookId: '', webhookSecret: '', failingWebhookId: '', jobId: '' };

describe('console', () => {
  it('serves the page with a strict Content-Security-Policy', async () => {
    const res = await fetch(`${stack.mailer.restUrl}/console`);
    expect(res.status).toBe(200);
    const csp = res.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("default-src 'self'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(await res.text()).not.toMatch(/<script(?![^>]*\bsrc=)/);
  });

  it('refuses a wrong admin token and signs in with the right one', async () => {
    await page.goto(`${stack.mailer.restUrl}/console`);
    await page.getByRole('heading', { name: 'Sign in to the console' }).waitFor();
    await page.getByLabel('Admin token').fill('adm_not-the-token');
    await page.getByLabel('Admin token').press('Enter');
    await expect.poll(() => page.locator('#sign-in-error').innerText()).toBe('Invalid or missing admin token');
    expect(await status()).toBe('Invalid or missing admin token');
    expect(await page.getByLabel('Admin token').getAttribute('aria-invalid')).toBe('true');
    expect(browser.takeErrors()).toEqual([expect.stringContaining('401')]);
    await browser.screenshot('sign-in');

    await page.getByLabel('Admin token').fill(ADMIN_TOKEN);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { level: 1, name: 'Accounts' }).waitFor();
    // Nothing a script can read holds the token or the session: it is an HttpOnly, SameSite=Strict cookie.
    expect(JSON.parse(await readableByScripts())).toEqual({ session: {}, local: {}, cookie: '' });
    expect(await sessionCookie()).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/' });
    expect(await page.locator('#signed-in-as').innerText()).toBe('Signed in as the operator');
    await row(stack.accountId).waitFor();
  });

  it('lists accounts with their usage, creates one and changes its status and quota', async () => {
    const seeded = await row(stack.accountId).locator('td').allInnerTexts();
    // Status, daily quota, used today, bounce rate, complaint rate, created, actions.
    expect(seeded.slice(0, 5)).toEqual(['healthy', '1,000', '0 / 1,000', '0.00 %', '0.00 %']);
    await browser.screenshot('accounts');

    // The skip link moves focus to the page and leaves the route alone.
    await page.locator('.skip-link').focus();
    await page.keyboard.press('Enter');
    expect(await page.evaluate('document.activeElement.id')).toBe('main');
    expect(page.url()).toMatch(/#\/accounts$/);

    await page.getByLabel('Account name').fill('Console Co');
    await page.getByRole('button', { name: 'Create account' }).click();
    const created = row('Console Co');
    await created.waitFor();
    expect(await created.innerText()).toContain('healthy');

    // Escape closes a dialog without changing anything.
    await page.getByRole('button', { name: 'Edit Console Co' }).click();
    const dialog = page.getByRole('dialog', { name: 'Edit Console Co' });
    await dialog.getByLabel('Status').focus();
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });

    await page.getByRole('button', { name: 'Edit Console Co' }).click();
    await dialog.getByLabel('Status').selectOption('review');
    await dialog.getByLabel('Daily quota').fill('250');
    await dialog.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => created.locator('td').allInnerTexts()).toEqual(expect.arrayContaining(['review', '250']));

    const { body } = await admin<{ accounts: { id: string; name: string; status: string; daily_quota: number }[] }>(
      stack,
      'GET',
      '/accounts',
    );
    const account = body.accounts.find((a) => a.name === 'Console Co')!;
    expect(account).toMatchObject({ status: 'review', daily_quota: 250 });
    state.accountId = account.id;
  });
});

describe('console', () => {
  it('adds a domain, shows its DNS records, verifies it (refused, then forced) and turns tracking on', async () => {
    await page.getByRole('link', { name: /Console Co/ }).click();
    await page.getByRole('heading', { level: 1, name: /Console Co/ }).waitFor();
    await page.getByRole('navigation', { name: 'Account sections' }).getByRole('link', { name: 'Domains' }).click();
    await page.getByLabel('Domain name').fill('console.example');
    await page.getByRole('button', { name: 'Add domain' }).click();

    const card = page.locator('[data-domain="console.example"]');
    await card.waitFor();
    const { body } = await admin<{
      domains: { dns_records: { type: string; purpose: string; value: string; zone_value: string }[] }[];
    }>(stack, 'GET', `/accounts/${state.accountId}/domains`);
    const records = body.domains[0]!.dns_records;
    expect(records.length).toBeGreaterThan(0);
    // Each value to copy; the DKIM value, over 255 characters, also as the quoted 255-character strings of its
    // zone_value, labelled so.
    const dkim = records.find((r) => r.purpose === 'dkim')!;
    expect(dkim.value.length).toBeGreaterThan(255);
    expect(await each(card.locator('input.copy-input'), (l) => l.inputValue())).toEqual(
      records.flatMap((r) => (r === dkim ? [r.value, r.zone_value] : [r.value])),
    );
    expect(dkim.zone_value).toBe(`"${dkim.value.slice(0, 255)}" "${dkim.value.slice(255)}"`);
    const split = card.locator('table.data tbody tr').filter({ hasText: 'DKIM' }).locator('.zone-value');
    expect(await split.locator('.hint').innerText()).toContain('quoted 255-character strings');
    expect(
      await split.getByRole('button', { name: /^Copy TXT record \d+ value as quoted 255-character strings$/ }).count(),
    ).toBe(1);
    // Each record's purpose and its status from the last DNS check (none yet: all pending).
    expect(await each(card.locator('table.data thead th'), (l) => l.textContent())).toEqual([
      'Purpose',
      'Status',
      'Type',
      'Name',
      'Value',
    ]);
    const purposeAndStatus = () =>
      each(
        card.locator('table.data tbody tr'),
        async (r) => `${await r.locator('th').textContent()}: ${await r.locator('td .pill').textContent()}`,
      );
    expect(await purposeAndStatus()).toEqual([
      'Ownership: pending',
      'SPF: pending',
      'DKIM: pending',
      'Return path: pending',
      'Return path SPF: pending',
      'DMARC (recommended): pending',
    ]);

    // console.example publishes no TXT record: a plain verify leaves it unverified.
    await card.getByRole('button', { name: 'Verify', exact: true }).click();
    await expect.poll(status).toContain('not verified yet');
    expect(await card.locator('.card-title .pill').innerText()).toBe('unverified');

    await card.getByRole('button', { name: 'Force verify' }).click();
    await page
      .getByRole('dialog', { name: 'Mark console.example verified?' })
      .getByRole('button', { name: 'Mark verified' })
      .click();
    await expect.poll(() => card.locator('.card-title .pill').innerText()).toBe('verified');
    expect(await card.getByRole('button', { name: 'Verify', exact: true }).count()).toBe(0);
    expect(await card.locator('.failing-badge').count()).toBe(0);

    // Rotating the DKIM key adds the new key's record, pending, next to the current one.
    await card.getByRole('button', { name: 'Rotate DKIM key' }).click();
    await page
      .getByRole('dialog', { name: 'Rotate the DKIM key of console.example?' })
      .getByRole('button', { name: 'Rotate key' })
      .click();
    await expect.poll(status).toContain('A new DKIM key for console.example');
    await expect.poll(async () => (await purposeAndStatus()).filter((r) => r?.startsWith('DKIM')).length).toBe(2);

    await card.getByRole('switch', { name: 'Open tracking' }).check();
    await expect.poll(status).toBe('Open tracking on for console.example.');
    const after = await admin<{ domains: { verified: boolean; open_tracking: boolean; click_tracking: boolean }[] }>(
      stack,
      'GET',
      `/accounts/${state.accountId}/domains`,
    );
    expect(after.body.domains[0]).toMatchObject({ verified: true, open_tracking: true, click_tracking: false });
    await browser.screenshot('domains');
  });

  it('creates an API key shown exactly once, which sends; lists its usage; deletes it', async () => {
    await page.getByRole('navigation', { name: 'Account sections' }).getByRole('link', { name: 'API keys' }).click();
    await page.getByLabel('Name', { exact: true }).fill('ci');
    await page.getByLabel('Permission').selectOption('send_only');
    await page.getByLabel('Allowed sender domains').fill('console.example');
    await page.getByRole('button', { name: 'Create key' }).click();

    const dialog = page.getByRole('dialog', { name: 'API key ci' });
    const key = await dialog.getByLabel('API key', { exact: true }).inputValue();
    expect(key).toMatch(/^mk_/);
    await dialog.getByRole('button', { name: 'Copy API key' }).click();
    expect(await page.evaluate('navigator.clipboard.readText()')).toBe(key);
    await browser.screenshot('api-key-once');
    await dialog.getByRole('button', { name: 'I have copied it' }).click();
    // A closed <dialog> leaves the accessibility tree at once but the DOM only when the console removes it.
    await expect.poll(() => page.locator('dialog').count()).toBe(0);
    expect(await page.content()).not.toContain(key);

    const sent = await call('POST', `${stack.api}/emails`, {
      token: key,
      body: validEmail({ from: 'hello@console.example' }),
    });
    expect(sent.status).toBe(200);

    await page.reload();
    const listed = row('send_only');
    await listed.waitFor();
    expect(await page.content()).not.toContain(key);
    // Permission, allowed domains, requests, emails sent, error rate.
    expect((await listed.locator('td').allInnerTexts()).slice(0, 5)).toEqual([
      'send_only',
      'console.example',
      '1',
      '1',
      '0.00 %',
    ]);
    await browser.screenshot('api-keys');

    await listed.getByRole('button', { name: 'Delete key ci' }).click();
    await page.getByRole('dialog', { name: 'Delete the key ci?' }).getByRole('button', { name: 'Delete key' }).click();
    await page.getByText('No API keys yet.').waitFor();
    expect(
      (await call('POST', `${stack.api}/emails`, { token: key, body: validEmail({ from: 'hello@console.example' }) }))
        .status,
    ).toBe(401);
  });
});

describe('console', () => {
  it('creates a webhook with its secret shown once, and verifies it with a signed test request', async () => {
    const url = `${receiver.url}/hooks/mail`;
    await open(`/accounts/${stack.accountId}/webhooks`, /default/);
    await page.getByLabel('Endpoint URL').fill(url);
    for (const event of ['open', 'click']) await page.getByRole('checkbox', { name: event, exact: true }).uncheck();
    await page.getByRole('button', { name: 'Create webhook' }).click();

    const dialog = page.getByRole('dialog', { name: 'Webhook signing secret' });
    const secret = await dialog.getByLabel('Signing secret', { exact: true }).inputValue();
    expect(secret.length).toBeGreaterThanOrEqual(16);
    state.webhookSecret = secret;
    await dialog.getByRole('button', { name: 'I have copied it' }).click();
    await expect.poll(() => page.locator('dialog').count()).toBe(0);
    expect(await page.content()).not.toContain(secret);

    const listed = row(url);
    expect(await listed.innerText()).toContain('send, delivery, bounce, complaint, reject');
    await listed.getByRole('button', { name: `Verify ${url}` }).click();
    const result = listed.locator('.verify-result');
    await expect.poll(() => result.innerText(), { timeout: 15_000 }).toMatch(/^(Success|Failed|Error)/);
    expect(await result.innerText()).toBe('Success: HTTP 200');
    expect(receiver.received.filter((r) => r.path === '/hooks/mail').map((r) => r.headers['x-mail-event'])).toContain(
      'test',
    );
    await browser.screenshot('webhooks');

    const { body } = await admin<{ webhooks: { id: string; url: string }[] }>(
      stack,
      'GET',
      `/accounts/${stack.accountId}/webhooks`,
    );
    state.webhookId = body.webhooks.find((w) => w.url === url)!.id;

    // A second endpoint that fails until told otherwise: its deliveries of the next test's batch end discarded.
    receiver.respond = (hook) => ({ status: hook.path === '/hooks/failing' ? 500 : 200 });
    const failing = await admin<{ id: string }>(stack, 'POST', `/accounts/${stack.accountId}/webhooks`, {
      url: `${receiver.url}/hooks/failing`,
      events: ['delivery'],
    });
    state.failingWebhookId = failing.body.id;
  });

  it('shows a batch of 20 progressing until it is completed', async () => {
    const emails = Array.from({ length: 20 }, (_, i) =>
      validEmail({ to: [`reader${i}@example.net`], subject: `Batch ${i}` }),
    );
    const batch = await call<{ job_id: string }>('POST', `${stack.api}/emails/batch`, {
      token: stack.apiKey,
      body: { emails },
    });
    expect(batch.status).toBe(200);
    state.jobId = batch.body.job_id;

    // The job's status in each answer the page got: it asks again every second until the job has ended.
    const answers: Promise<string>[] = [];
    const watch = (res: Response) => {
      if (!res.url().includes(`/accounts/${stack.accountId}/batches`)) return;
      answers.push(
        res
          .json()
          .then(
            (b: { batch_jobs: { job_id: string; status: string }[] }) =>
              b.batch_jobs.find((j) => j.job_id === state.jobId)?.status ?? 'absent',
          ),
      );
    };
    page.on('response', watch);
    await open(`/accounts/${stack.accountId}/batches`, /default/);
    const job = row(state.jobId);
    await expect.poll(() => job.innerText(), { timeout: 30_000 }).toMatch(/completed[\s\S]*20\/20/);
    page.off('response', watch);
    const seen = await Promise.all(answers);
    expect(await job.getByRole('progressbar').getAttribute('aria-valuetext')).toBe('20 of 20 sent');
    expect(seen.at(-1)).toBe('completed');
    if (seen[0] !== 'completed') expect(seen.length).toBeGreaterThanOrEqual(2);
    await browser.screenshot('batches');
  });

  it('lists the events sent to the webhook with their attempts', async () => {
    await eventually(async () => (await deliveries(state.webhookId)).some((d) => d.status === 'succeeded'));
    await open(`/accounts/${stack.accountId}/webhooks/${state.webhookId}`, /default/);
    const delivered = deliveryRow('succeeded');
    const toggle = delivered.getByRole('button', { name: '1 attempt · last HTTP 200' });
    await toggle.click();
    expect(await toggle.getAttribute('aria-expanded')).toBe('true');
    const attempt = await (await attemptRows(toggle)).first().locator('td').allInnerTexts();
    // Started, status code, latency, response, error.
    expect(attempt[1]).toBe('200');
    expect(attempt[2]).toMatch(/^\d+ ms$/);
    expect(attempt[3]).toBe('answered 200');
    expect(attempt[4]).toBe('—');
    await browser.screenshot('webhook-deliveries');
  });
});

describe('console', () => {
  it('shows a disabled webhook with why, and enables it', async () => {
    // Disabled as the failure threshold would (the threshold itself: test/integration/webhook-trust.test.ts),
    // once the batch's events have all been delivered to it.
    await eventually(async () => (await deliveries(state.webhookId)).every((d) => d.status === 'succeeded'), 30_000);
    const sql = postgres(stack.databaseUrl, { max: 1, onnotice: () => {} });
    try {
      await sql`update webhooks set disabled_at = now(), disabled_reason = '10 deliveries in a row discarded (every attempt failed)' where id = ${state.webhookId}`;
    } finally {
      await sql.end();
    }
    const url = `${receiver.url}/hooks/mail`;
    await open(`/accounts/${stack.accountId}/webhooks`, /default/);
    const listed = row(url);
    expect(await listed.locator('.pill').innerText()).toBe('disabled');
    expect(await listed.innerText()).toContain('10 deliveries in a row discarded (every attempt failed)');
    await browser.screenshot('webhook-disabled');
    await listed.getByRole('button', { name: `Enable ${url}` }).click();
    await expect.poll(status).toBe(`Webhook ${url} enabled: new events are sent again.`);
    await expect.poll(() => listed.locator('.pill').innerText()).toBe('active');
    expect(await listed.getByRole('button', { name: `Enable ${url}` }).count()).toBe(0);
    const { body } = await admin<{ webhooks: { id: string; disabled_at?: string }[] }>(
      stack,
      'GET',
      `/accounts/${stack.accountId}/webhooks`,
    );
    expect(body.webhooks.find((w) => w.id === state.webhookId)).not.toHaveProperty('disabled_at');
  });

  it('rotates a webhook secret, shows the new one once with until when the old one signs, and signs with both', async () => {
    const url = `${receiver.url}/hooks/mail`;
    const listed = row(url);
    await listed.getByRole('button', { name: `Rotate secret of ${url}` }).click();
    await page
      .getByRole('dialog', { name: 'Rotate the signing secret?' })
      .getByRole('button', { name: 'Rotate secret' })
      .click();

    const dialog = page.getByRole('dialog', { name: 'New webhook signing secret' });
    const secret = await dialog.getByLabel('Signing secret', { exact: true }).inputValue();
    expect(secret).toMatch(/^whsec_/);
    expect(secret).not.toBe(state.webhookSecret);
    const { body } = await admin<{ webhooks: { id: string; previous_secret_until?: string }[] }>(
      stack,
      'GET',
      `/accounts/${stack.accountId}/webhooks`,
    );
    const until = Date.parse(body.webhooks.find((w) => w.id === state.webhookId)!.previous_secret_until ?? '');
    // The default overlap: 24 h from the rotation (a minute of slack for a loaded machine).
    expect(Math.abs(until - Date.now() - 86_400_000)).toBeLessThan(60_000);
    expect(await dialog.innerText()).toContain('The old secret still signs every request until ');
    await browser.screenshot('webhook-secret-rotated');
    await dialog.getByRole('button', { name: 'I have copied it' }).click();
    await expect.poll(() => page.locator('dialog').count()).toBe(0);
    expect(await page.content()).not.toContain(secret);
    await page.reload();
    await listed.waitFor();
    expect(await page.content()).not.toContain(secret);

    // During the overlap each request is signed with the new secret and, beside it, the old one.
    const before = receiver.on('/hooks/mail').length;
    await listed.getByRole('button', { name: `Verify ${url}` }).click();
    await expect
      .poll(() => listed.locator('.verify-result').innerText(), { timeout: 15_000 })
      .toBe('Success: HTTP 200');
    const test = receiver
      .on('/hooks/mail')
      .slice(before)
      .find((r) => r.headers['x-mail-event'] === 'test')!;
    const timestamp = String(test.headers['x-mail-timestamp']);
    expect(test.headers['x-mail-signature']).toBe(signatureFor(secret, timestamp, test.rawBody));
    expect(test.headers['x-mail-signature-previous']).toBe(signatureFor(state.webhookSecret, timestamp, test.rawBody));
  });
});

describe('console', () => {
  it('resends a discarded delivery once the endpoint answers again', async () => {
    // Each delivery is tried 4 times (after 1, 2 and 4 s) before it is discarded.
    await eventually(async () => (await deliveries(state.failingWebhookId)).some((d) => d.status === 'discarded'));
    await open(`/accounts/${stack.accountId}/webhooks/${state.failingWebhookId}?status=discarded`, /default/);
    const discarded = deliveryRow('discarded');
    const toggle = discarded.getByRole('button', { name: '4 attempts · last HTTP 500' });
    await toggle.click();
    expect(await each(await attemptRows(toggle), (l) => l.locator('td').nth(1).innerText())).toEqual([
      '500',
      '500',
      '500',
      '500',
    ]);
    await browser.screenshot('webhook-discarded');

    receiver.respond = () => ({ status: 200 });
    await discarded.getByRole('button', { name: /^Resend / }).click();
    await expect.poll(status).toBe('The delivery event is being sent again.');
    await eventually(async () => (await deliveries(state.failingWebhookId)).some((d) => d.status === 'succeeded'));
    await page.getByLabel('Status').selectOption('succeeded');
    await page.waitForURL(/status=succeeded/);
    expect(await deliveryRow('succeeded').locator('button.disclosure').innerText()).toMatch(/ · last HTTP 200$/);
  });

  it('re-sends the discarded deliveries of a time range and says how many were queued', async () => {
    // The batch's other 19 delivery events to the failing endpoint: all discarded once their retries ran out.
    await eventually(
      async () => (await deliveries(state.failingWebhookId)).every((d) => d.status !== 'pending'),
      30_000,
    );
    const discarded = (await deliveries(state.failingWebhookId)).filter((d) => d.status === 'discarded').length;
    expect(discarded).toBeGreaterThanOrEqual(1);

    const form = page.locator('form', { has: page.getByRole('button', { name: 'Re-send discarded' }) });
    // From a day ago to the next minute: the defaults, which hold every delivery of this run.
    expect(await form.getByLabel('From').inputValue()).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d$/);
    await form.getByRole('button', { name: 'Re-send discarded' }).click();
    await expect.poll(() => form.locator('.resend-result').innerText()).toBe(`${discarded} queued`);
    await browser.screenshot('webhook-resend-range');
    // The endpoint answers 200 now: every one of them ends delivered.
    await eventually(
      async () => (await deliveries(state.failingWebhookId)).every((d) => d.status === 'succeeded'),
      30_000,
    );

    // Nothing discarded is left in the range.
    await form.getByRole('button', { name: 'Re-send discarded' }).click();
    await expect.poll(() => form.locator('.resend-result').innerText()).toBe('0 queued');
  });

  it('filters and pages emails, and shows one email with its event timeline', async () => {
    expect(
      (await call('POST', `${stack.api}/emails`, { token: stack.apiKey, body: validEmail({ subject: 'Direct' }) }))
        .status,
    ).toBe(200);
    await open(`/accounts/${stack.accountId}/emails`, /default/);
    // 20 from the batch and the direct one: two pages of 20.
    await expect.poll(() => page.locator('.page-of').innerText()).toMatch(/^Page 1 of 2/);
    await page.getByRole('button', { name: 'Next' }).click();
    await expect.poll(() => page.locator('.page-of').innerText()).toMatch(/^Page 2 of 2/);

    await page.getByLabel('Job id').fill(state.jobId);
    await page.getByLabel('Job type').selectOption('batch');
    await page.getByRole('button', { name: 'Filter' }).click();
    await expect.poll(() => page.locator('table.data tbody tr').count()).toBe(20);
    expect(page.url()).toContain(`job_id=${state.jobId}`);
    expect(await page.locator('.pagination').count()).toBe(0);
    await browser.screenshot('emails');

    await page.locator('table.data tbody tr a', { hasText: 'Batch 7' }).click();
    await page.getByRole('heading', { level: 1, name: /Batch 7/ }).waitFor();
    const timeline = page.locator('.timeline');
    await expect
      .poll(() => each(timeline.locator('.timeline-item'), (l) => l.getAttribute('data-event')))
      .toEqual(expect.arrayContaining(['send', 'delivery']));
    expect(await timeline.locator('[data-event="delivery"] .event-data').innerText()).toContain('smtp_response');
    expect(await timeline.locator('[data-event="delivery"] time').innerText()).not.toBe('');
    await browser.screenshot('email');
  });

  it('lists scheduled emails by status and cancels one', async () => {
    const scheduledAt = new Date(Date.now() + 3_600_000).toISOString();
    const sch = await call<{ id: string }>('POST', `${stack.api}/emails/schedule`, {
      token: stack.apiKey,
      body: { ...validEmail({ subject: 'Later' }), scheduled_at: scheduledAt },
    });
    expect(sch.status).toBe(200);

    await open(`/accounts/${stack.accountId}/scheduled`, /default/);
    const item = row(sch.body.id);
    expect(await item.innerText()).toContain('enqueued');
    await item.getByRole('button', { name: 'Cancel Later' }).click();
    await page
      .getByRole('dialog', { name: 'Cancel this scheduled email?' })
      .getByRole('button', { name: 'Cancel email' })
      .click();
    await expect.poll(() => item.innerText()).toContain('cancelled');

    await page.getByLabel('Status').selectOption('cancelled');
    await page.waitForURL(/status=cancelled/);
    await row(sch.body.id).waitFor();
    await browser.screenshot('scheduled');
  });

  it('shows the suppression list', async () => {
    await open(`/accounts/${stack.accountId}/suppressions`, /default/);
    // The catcher accepts every address, so nothing is suppressed.
    await page.getByText('No suppressed addresses.').waitFor();
    await browser.screenshot('suppressions');
  });
});

describe('console', () => {
  it('draws sends and outcomes per day as an SVG bar chart with a text alternative', async () => {
    await open(`/accounts/${stack.accountId}/overview`, /default/);
    const chart = page.locator('svg.chart-svg');
    expect(await chart.getAttribute('role')).toBe('img');
    expect(await chart.locator('rect.bar').count()).toBeGreaterThan(0);
    expect(await chart.locator('desc').textContent()).toMatch(/^30 days from .*, in all: 2\d accepted, /);
    expect(await page.locator('.legend li').allInnerTexts()).toEqual([
      'Accepted',
      'Delivered',
      'Bounced',
      'Complained',
    ]);

    await page.getByText('Show the numbers').click();
    const today = new Date().toISOString().slice(0, 10);
    const cells = await row(today).locator('td').allInnerTexts();
    expect(Number(cells[0])).toBeGreaterThanOrEqual(21);
    await browser.screenshot('overview');
  });

  it('lists caught mail and renders one with its HTML sandboxed, its text and its headers', async () => {
    const html =
      '<h1>Hello from the catcher</h1><img src="https://tracker.example/pixel.gif" alt=""><script>document.title = "pwned"</script>';
    const sent = await call('POST', `${stack.api}/emails`, {
      token: stack.apiKey,
      body: validEmail({ subject: 'Caught in the console', html, text: 'Plain hello' }),
    });
    expect(sent.status).toBe(200);

    await open('/catcher', 'Mail catcher');
    const link = page.getByRole('link', { name: 'Caught in the console' });
    await expect
      .poll(
        async () => {
          await page.getByRole('button', { name: 'Refresh' }).click();
          return link.count();
        },
        { timeout: 20_000 },
      )
      .toBe(1);
    await browser.screenshot('catcher');

    await link.click();
    await page.getByRole('heading', { level: 1, name: 'Caught in the console' }).waitFor();
    const frame = page.locator('iframe.mail-frame');
    expect(await frame.getAttribute('sandbox')).toBe('');
    await expect
      .poll(() => page.frameLocator('iframe.mail-frame').locator('h1').innerText())
      .toBe('Hello from the catcher');
    expect(await page.locator('pre.mail-text').innerText()).toBe('Plain hello');
    // The header named Subject (the DKIM-Signature's h= list names it too).
    const subject = page.locator('table.data tbody tr').filter({ has: page.locator('th', { hasText: /^subject$/i }) });
    expect(await subject.locator('td').innerText()).toBe('Caught in the console');
    expect(await page.title()).toBe('Caught in the console · mailer');
    await browser.screenshot('caught-message');

    // The mail's script was blocked by the sandbox and its remote image by the policy, before any request.
    expect(browser.takeErrors()).toEqual(
      expect.arrayContaining([
        expect.stringContaining('Blocked script execution'),
        expect.stringContaining('violates the following Content Security Policy directive: "img-src \'self\' data:"'),
      ]),
    );
  });

  it('signs out, ending the session', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in to the console' }).waitFor();
    await expect.poll(sessionCookie).toBeUndefined();
    await page.goto(`${stack.mailer.restUrl}/console#/accounts`);
    await page.getByRole('heading', { name: 'Sign in to the console' }).waitFor();
  });
});
