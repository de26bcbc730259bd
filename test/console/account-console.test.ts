/**
 * The console of an account (issue 27), in real headless Chromium against the whole service: a new account's
 * API key of permission `all` signs in and sees its own overview, emails with their timelines, domains with their
 * DNS records and check status, keys, webhooks and deliveries, suppressions, templates and inbound routes, and
 * never a second account's (which has one of each too), nor the accounts list, the catcher or the operator's
 * controls; every call it makes goes to the public API as its key. It signs out; a read_only key is refused with
 * a clear message. After each test: no request left loopback, and the page logged no error it was not expected to.
 */
import type { Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { admin, createSender } from '../helpers/admin-fixtures.js';
import { startDnsServer, type DnsServer } from '../helpers/dns-server.js';
import { call, eventually, validEmail } from '../helpers/http.js';
import { useStack } from '../helpers/use-stack.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';
import { signInToConsole, useConsole } from './browser.js';

let zone: DnsServer;
let receiver: WebhookReceiver;
const stack = useStack(async () => {
  // The domain checks ask a DNS server of the test's own: no lookup leaves the machine.
  zone = await startDnsServer();
  receiver = await startWebhookReceiver();
  return {
    SMTP_URL: '',
    MAILER_CATCHER_PORT: '0',
    MAILER_WEBHOOK_ALLOW_PRIVATE: '1',
    MAILER_DNS_SERVERS: zone.servers,
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'error',
  };
});
const browser = useConsole();
afterAll(async () => {
  await receiver?.close();
  await zone?.close();
});
let page: Page;

interface Made {
  accountId: string;
  key: string;
  emailId: string;
  webhookId: string;
}
const acme = {} as Made;
const bravo = {} as Made;
/** Every API request the page made (path and query). */
const requests: string[] = [];

/** One account's things, each named after the account so that a page showing another's is caught. */
async function makeAccount(made: Made, name: string, slug: string): Promise<void> {
  const sender = await createSender(stack, name, `${slug}.test`);
  Object.assign(made, { accountId: sender.accountId, key: sender.key });
  const a = `/accounts/${sender.accountId}`;
  await admin(stack, 'POST', `${a}/api-keys`, { name: `${name} deploy key`, permission: 'send_only' });
  const hook = await admin<{ id: string }>(stack, 'POST', `${a}/webhooks`, {
    url: `${receiver.url}/${slug}`,
    events: ['send', 'delivery'],
  });
  made.webhookId = hook.body.id;
  await admin(stack, 'POST', `${a}/suppressions`, { email: `blocked@${slug}-list.example` });
  await admin(stack, 'POST', `${a}/templates`, {
    name: `${name} welcome`,
    subject: 'Hi {{name}}',
    html: `<p>Hi {{name}} from ${name}</p>`,
  });
  await admin(stack, 'POST', `${a}/inbound/routes`, { match: `help@${slug}.test` });
  const sent = await call<{ id: string }>('POST', `${stack.api}/emails`, {
    token: sender.key,
    body: validEmail({ from: `news@${slug}.test`, subject: `${name} newsletter` }),
  });
  expect(sent.status, sent.text).toBe(200);
  made.emailId = sent.body.id;
}

beforeAll(async () => {
  await makeAccount(acme, 'Acme Self', 'acme-self');
  await makeAccount(bravo, 'Bravo Other', 'bravo-other');
  page = browser.page;
  page.on('request', (r) => {
    const url = new URL(r.url());
    if (url.pathname.startsWith('/v1/')) requests.push(`${r.method()} ${url.pathname}${url.search}`);
  });
  // Both sent (the catcher took them), so the timelines have events.
  for (const made of [acme, bravo])
    await eventually(async () => {
      const res = await call<{ status: string }>('GET', `${stack.api}/emails/${made.emailId}`, { token: made.key });
      return res.body.status !== 'pending';
    });
});

const main = (): Locator => page.locator('#main');

/** Opens one of the account's tabs afresh and waits until it shows `mine`; then it must not show `theirs`. */
async function tab(name: string, mine: string, theirs: string): Promise<void> {
  await page.goto('about:blank');
  await page.goto(`${stack.mailer.restUrl}/console#/accounts/${acme.accountId}/${name}`);
  await expect.poll(() => main().innerText(), { timeout: 15_000 }).toContain(mine);
  expect(await main().innerText()).not.toContain(theirs);
}

describe('the console of an account', () => {
  it("refuses a read_only key with a clear message, and signs in with the account's key of permission all", async () => {
    const readOnly = await admin<{ key: string }>(stack, 'POST', `/accounts/${acme.accountId}/api-keys`, {
      name: 'Acme reader',
      permission: 'read_only',
    });
    await page.goto(`${stack.mailer.restUrl}/console`);
    await page.getByLabel('Admin token or API key').fill(readOnly.body.key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect
      .poll(() => page.locator('#sign-in-error').innerText())
      .toBe("The console needs an API key of permission all; this key's permission is read_only");
    expect(browser.takeErrors()).toEqual([expect.stringContaining('403')]);

    await signInToConsole(page, `${stack.mailer.restUrl}`, acme.key, 'Acme Self');
    expect(page.url()).toMatch(new RegExp(`#/accounts/${acme.accountId}$`));
    // Nothing a script can read holds the key or the session.
    const readable = await page.evaluate(
      'JSON.stringify([{ ...sessionStorage }, { ...localStorage }, document.cookie])',
    );
    expect(readable).toBe('[{},{},""]');
    expect(readable).not.toContain(acme.key);
  });

  it('lands on its own overview: status, quota, sent today and rates, without the operator controls', async () => {
    const facts = await page.locator('dl.facts').innerText();
    expect(facts).toMatch(/Status\s+healthy/);
    expect(facts).toMatch(/Daily quota\s+1,000/);
    expect(facts).toMatch(/Used today\s+1 \/ 1,000/);
    expect(facts).toMatch(/Bounce rate\s+0\.00 %/);
    expect(await page.getByRole('button', { name: 'Edit status and quota' }).count()).toBe(0);
    // The sidebar: the account itself, no accounts list, no mail catcher.
    const nav = page.getByRole('navigation', { name: 'Console' });
    expect(await nav.getByRole('link', { name: 'Acme Self' }).count()).toBe(1);
    expect(await nav.getByRole('link', { name: 'Accounts' }).count()).toBe(0);
    expect(await nav.getByRole('link', { name: 'Mail catcher' }).isVisible()).toBe(false);
    expect(await page.locator('#signed-in-as').innerText()).toBe('Signed in with an API key of Acme Self');
    await browser.screenshot('account-overview');
  });

  it('is sent home from the accounts list, the catcher and another account', async () => {
    for (const route of ['/accounts', '/catcher', `/accounts/${bravo.accountId}/emails`]) {
      await page.goto('about:blank');
      await page.goto(`${stack.mailer.restUrl}/console#${route}`);
      await page.getByRole('heading', { level: 1, name: 'Acme Self' }).waitFor();
      expect(page.url(), route).toMatch(new RegExp(`#/accounts/${acme.accountId}$`));
      expect(await main().innerText()).not.toContain('Bravo');
    }
  });

  it('shows its own emails, one with its timeline, never the other account’s', async () => {
    await tab('emails', 'Acme Self newsletter', 'Bravo Other newsletter');
    await page.getByRole('link', { name: 'Acme Self newsletter' }).click();
    await page.getByRole('heading', { level: 1, name: 'Acme Self newsletter' }).waitFor();
    await expect.poll(() => page.locator('.timeline-item').count()).toBeGreaterThan(0);
    expect(await page.locator('.timeline-item').first().getAttribute('data-event')).toBe('send');
    // The crumbs lead to the account, not to an accounts list.
    expect(await page.getByRole('link', { name: 'Accounts' }).count()).toBe(0);

    // Another account's email, by its id: not found.
    await page.goto('about:blank');
    await page.goto(`${stack.mailer.restUrl}/console#/emails/${bravo.emailId}`);
    await expect.poll(() => main().innerText()).toContain('not found');
    expect(await main().innerText()).not.toContain('Bravo');
    // The email and its events are asked for together: both 404 (the second may be logged after the page shows it).
    const errors: string[] = [];
    await expect
      .poll(() => {
        errors.push(...browser.takeErrors());
        return errors;
      })
      .toEqual([expect.stringContaining('404'), expect.stringContaining('404')]);
  });

  it('adds a domain, shows its DNS records and their status after a real check, with no Force verify', async () => {
    await tab('domains', 'acme-self.test', 'bravo-other.test');
    await page.getByLabel('Domain name').fill('fresh.acme-self.test');
    await page.getByRole('button', { name: 'Add domain' }).click();
    const card = page.locator('[data-domain="fresh.acme-self.test"]');
    await card.waitFor();
    expect(await card.getByRole('button', { name: 'Force verify' }).count()).toBe(0);

    // The ownership record published, the others not: the check finds exactly that.
    const { domains } = (
      await call<{ domains: { name: string; dns_records: { purpose: string; name: string; value: string }[] }[] }>(
        'GET',
        `${stack.api}/domains`,
        { token: acme.key },
      )
    ).body;
    const ownership = domains
      .find((d) => d.name === 'fresh.acme-self.test')!
      .dns_records.find((r) => r.purpose === 'ownership')!;
    zone.set(ownership.name, 'TXT', [ownership.value]);
    await card.getByRole('button', { name: 'Verify' }).click();
    await expect.poll(() => page.locator('#status').innerText()).toContain('is not verified yet');
    const rows = card.locator('table tbody tr');
    await expect.poll(() => rows.filter({ hasText: 'Ownership' }).innerText()).toContain('verified');
    expect(await rows.filter({ hasText: 'SPF' }).first().innerText()).not.toContain('verified');
    expect(await card.innerText()).toContain('DNS checked');
    await browser.screenshot('account-domains');
  });

  it('lists its own keys, webhooks with their deliveries, suppressions, templates and inbound routes only', async () => {
    await tab('api-keys', 'Acme Self deploy key', 'Bravo Other deploy key');
    await tab('webhooks', `${receiver.url}/acme-self`, `${receiver.url}/bravo-other`);
    await page.goto('about:blank');
    await page.goto(`${stack.mailer.restUrl}/console#/accounts/${acme.accountId}/webhooks/${acme.webhookId}`);
    await expect.poll(() => main().innerText()).toContain(`Deliveries to ${receiver.url}/acme-self`);
    await expect.poll(() => page.locator('table.data tbody tr').count(), { timeout: 15_000 }).toBeGreaterThan(0);
    await tab('suppressions', 'blocked@acme-self-list.example', 'blocked@bravo-other-list.example');
    await tab('templates', 'Acme Self welcome', 'Bravo Other welcome');
    await tab('inbound', 'help@acme-self.test', 'help@bravo-other.test');
  });

  it('removes its suppression (by address, scope and topic on the public API) and previews its template', async () => {
    await tab('suppressions', 'blocked@acme-self-list.example', 'blocked@bravo-other-list.example');
    await page.getByRole('button', { name: 'Remove blocked@acme-self-list.example' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Remove suppression' }).click();
    await expect.poll(() => page.locator('#status').innerText()).toContain('removed from the suppression list');
    await expect.poll(() => main().innerText()).not.toContain('blocked@acme-self-list.example');
    const left = await call<{ total: number }>('GET', `${stack.api}/suppressions`, { token: acme.key });
    expect(left.body.total).toBe(0);
    const theirs = await call<{ total: number }>('GET', `${stack.api}/suppressions`, { token: bravo.key });
    expect(theirs.body.total).toBe(1);

    await tab('templates', 'Acme Self welcome', 'Bravo Other welcome');
    await page.getByRole('link', { name: 'Acme Self welcome' }).click();
    await page.getByRole('heading', { level: 2, name: 'Template Acme Self welcome' }).waitFor();
    await expect
      .poll(() => page.frameLocator('iframe.mail-frame').locator('p').innerText())
      .toBe('Hi name from Acme Self');
  });

  it('made every call to the public API as its key, none to the management API', async () => {
    expect(requests.length).toBeGreaterThan(10);
    expect(requests.filter((r) => r.includes('/v1/mail/admin'))).toEqual([]);
  });

  it('signs out: the session ends, and the pages ask to sign in again', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in to the console' }).waitFor();
    expect((await page.context().cookies()).find((c) => c.name === 'mailer_console')).toBeUndefined();
    await page.goto(`${stack.mailer.restUrl}/console#/accounts/${acme.accountId}/emails`);
    await page.getByRole('heading', { name: 'Sign in to the console' }).waitFor();
  });
});
