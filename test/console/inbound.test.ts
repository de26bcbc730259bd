/**
 * The console's inbound mail in real headless Chromium against the whole service: a route added (and one refused,
 * one deleted) on the account's Inbound page, a message delivered over SMTP into the service's own inbound
 * listener showing up in the inbox with its sender, tag and authentication, opened (its HTML in the sandboxed
 * frame, where its script does not run and its remote image does not load, its inline image shown; its text and
 * the reply alone), an attachment and the raw message downloaded; and a reply to an email the account sent,
 * shown on that email's timeline with a link back to the message. What the page did is checked through the
 * management API. After each test: no request left loopback, and the page logged no error it was not expected to.
 */
import fs from 'node:fs/promises';
import type { Locator, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { admin } from '../helpers/admin-fixtures.js';
import { startDnsServer, type DnsServer } from '../helpers/dns-server.js';
import { call, eventually } from '../helpers/http.js';
import { deliverInbound, PIXEL_PNG } from '../helpers/inbound-delivery.js';
import { ADMIN_TOKEN, startStack, type Stack } from '../helpers/stack.js';
import { launchConsoleBrowser, type ConsoleBrowser } from './browser.js';

const BADGE_SVG = '<svg xmlns="http://www.w3.org/2000/svg" width="3" height="2"><rect width="3" height="2"/></svg>';

let zone: DnsServer;
let stack: Stack;
let browser: ConsoleBrowser;
let page: Page;

type Route = { id: string; match: string };
type InboundEmail = { id: string; subject: string; reply_to_email_id: string | null };

beforeAll(async () => {
  // A DNS server of the test's own, which the checks of received mail ask: sender.test has an SPF record only.
  zone = await startDnsServer();
  [stack, browser] = await Promise.all([
    startStack({ MAILER_DNS_SERVERS: zone.servers, LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'error' }),
    launchConsoleBrowser(),
  ]);
  page = browser.page;
  zone.set('sender.test', 'TXT', ['v=spf1 ip4:127.0.0.1 -all']);
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

const inboundPath = () => `/accounts/${stack.accountId}/inbound`;
const routes = async () =>
  (await admin<{ routes: Route[]; total: number }>(stack, 'GET', `/accounts/${stack.accountId}/inbound/routes`)).body;
const inbox = async () =>
  (
    await admin<{ inbound_emails: InboundEmail[]; total: number }>(
      stack,
      'GET',
      `/accounts/${stack.accountId}/inbound/emails`,
    )
  ).body;

/** Opens a console view by its hash route and waits for a heading of its own. */
async function open(route: string, heading: string | RegExp, level = 2): Promise<void> {
  // From a blank page, so that opening the route already shown loads it afresh too.
  await page.goto('about:blank');
  await page.goto(`${stack.mailer.restUrl}/console#${route}`);
  await page.getByRole('heading', { level, name: heading }).waitFor();
}

const routeRow = (match: string): Locator =>
  page.locator('.route-list table.data tbody tr').filter({ has: page.locator('th', { hasText: match }) });
const inboxRow = (text: string): Locator => page.locator('.inbox table.data tbody tr').filter({ hasText: text });
const addForm = () => page.getByRole('form', { name: 'Add a route' });
const frame = () => page.frameLocator('iframe.mail-frame');

/**
 * The message's page was shown: its script was blocked by the sandbox and its remote image by the policy, before
 * any request; the page logged nothing else.
 */
function expectFrameGuards(): void {
  const errors = browser.takeErrors();
  expect(errors).toEqual(
    expect.arrayContaining([
      expect.stringContaining("Blocked script execution in 'about:srcdoc'"),
      expect.stringContaining('violates the following Content Security Policy directive: "img-src \'self\' data:"'),
    ]),
  );
  expect(errors).toHaveLength(2);
}

/** Saves what clicking `button` downloads, and answers its file name and bytes. */
async function download(button: Locator): Promise<{ name: string; bytes: Buffer }> {
  const [file] = await Promise.all([page.waitForEvent('download'), button.click()]);
  return { name: file.suggestedFilename(), bytes: await fs.readFile((await file.path())!) };
}

/** Waits for the message with `subject` in the inbox (through the API), then for the console to list it. */
async function waitInInbox(subject: string): Promise<InboundEmail> {
  const message = await eventually(async () => (await inbox()).inbound_emails.find((m) => m.subject === subject));
  await open(inboundPath(), 'Inbox');
  await inboxRow(subject).waitFor();
  return message;
}

describe('routes', () => {
  it('adds a route, shows a refused one beside the form, and deletes one once confirmed', async () => {
    await open(inboundPath(), 'Routes');
    expect(await page.locator('.route-list').innerText()).toContain('No routes');

    await addForm().getByLabel('Match').fill('support@example.com');
    await addForm().getByRole('button', { name: 'Add route' }).click();
    await routeRow('support@example.com').waitFor();
    await addForm().getByLabel('Match').fill('*@mail.example.com');
    await addForm().getByRole('button', { name: 'Add route' }).click();
    await routeRow('*@mail.example.com').waitFor();
    expect((await routes()).routes.map((r) => r.match).sort()).toEqual(['*@mail.example.com', 'support@example.com']);

    // A domain the account does not have: the API's refusal, beside the form; nothing added.
    await addForm().getByLabel('Match').fill('someone@not-ours.example');
    await addForm().getByRole('button', { name: 'Add route' }).click();
    const error = addForm().getByRole('alert');
    await error.waitFor();
    expect(await error.innerText()).toMatch(/not-ours\.example/);
    expect(await addForm().getByLabel('Match').getAttribute('aria-invalid')).toBe('true');
    expect((await routes()).total).toBe(2);
    expect(browser.takeErrors()).toEqual([expect.stringMatching(/status of 4\d\d/)]);

    await page.getByRole('button', { name: 'Delete route *@mail.example.com' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete route' }).click();
    await expect.poll(() => routeRow('*@mail.example.com').count()).toBe(0);
    expect((await routes()).routes.map((r) => r.match)).toEqual(['support@example.com']);
    await browser.screenshot('inbound-routes');
  });
});

describe('the inbox', () => {
  const subject = 'Question about my order';
  const html =
    '<h1 id="greeting">Hello support</h1>' +
    '<p><img id="logo" src="cid:logo@sender.test" alt="logo"><img id="badge" src="cid:badge@sender.test" alt=""></p>' +
    '<img id="remote" src="https://tracker.example/pixel.gif" alt="">' +
    '<script>document.body.append(Object.assign(document.createElement("p"), { id: "ran" }))</script>';
  let message: InboundEmail;

  beforeAll(async () => {
    const answer = await deliverInbound(stack, {
      from: 'Ann Sender <ann@sender.test>',
      to: 'support+order-77@example.com',
      subject,
      text: 'Where is my parcel?\n\nOn Mon, 1 Jan 2026 at 10:00, Shop <shop@example.com> wrote:\n> Your order shipped.\n',
      html,
      attachments: [
        { filename: 'notes.txt', content: 'order 77, two boxes\n', contentType: 'text/plain' },
        { filename: 'logo.png', content: PIXEL_PNG, contentType: 'image/png', cid: 'logo@sender.test' },
        // An SVG, which the API serves as octet-stream (a browser would run it as a page): shown all the same.
        { filename: 'badge.svg', content: BADGE_SVG, contentType: 'image/svg+xml', cid: 'badge@sender.test' },
      ],
    });
    expect(answer).toMatch(/^250/);
  });

  it('lists the message newest first with its sender, route, tag and authentication', async () => {
    message = await waitInInbox(subject);
    const cells = await inboxRow(subject).locator('th, td').allInnerTexts();
    expect(cells[0]).toContain('Ann Sender');
    expect(cells[0]).toContain('ann@sender.test');
    expect(cells[1]).toContain(message.id);
    expect(cells[3]).toContain('support@example.com');
    expect(cells[3]).toContain('order-77');
    const badges = inboxRow(subject).locator('.auth-badges .pill');
    // sender.test's SPF names the listener's client address; the mail is not signed and the domain has no DMARC.
    expect(await badges.allInnerTexts()).toEqual(['SPF pass', 'DKIM none', 'DMARC none']);
    expect(await badges.evaluateAll((els) => els.map((el) => el.className))).toEqual([
      'pill good',
      'pill muted',
      'pill muted',
    ]);
    expect(
      await page
        .getByRole('status')
        .filter({ hasText: /messages? received/ })
        .innerText(),
    ).toMatch(/^1 message received/);
    await browser.screenshot('inbound-inbox');
  });

  it('shows the message: its HTML sandboxed (no script, no remote image), the inline image, text and reply', async () => {
    await open(inboundPath(), 'Inbox');
    await inboxRow(subject).getByRole('link').click();
    await page.getByRole('heading', { level: 2, name: subject }).waitFor();

    const iframe = page.locator('iframe.mail-frame');
    expect(await iframe.getAttribute('sandbox')).toBe('');
    expect(await iframe.getAttribute('srcdoc')).toContain('Hello support');
    await expect.poll(() => frame().locator('#greeting').innerText()).toBe('Hello support');
    // The inline image is written in as a data: URL and shows; the remote one never loads.
    await expect
      .poll(() =>
        frame()
          .locator('#logo')
          .evaluate((img) => (img as unknown as { naturalWidth: number }).naturalWidth),
      )
      .toBe(1);
    expect(await frame().locator('#logo').getAttribute('src')).toMatch(/^data:image\/png;base64,/);
    await expect
      .poll(() =>
        frame()
          .locator('#badge')
          .evaluate((img) => (img as unknown as { naturalWidth: number }).naturalWidth),
      )
      .toBe(3);
    expect(await frame().locator('#badge').getAttribute('src')).toMatch(/^data:image\/svg\+xml;base64,/);
    // The message's script did not run: it would have added #ran.
    expect(await frame().locator('#ran').count()).toBe(0);

    const facts = page.locator('.inbound-message dl.facts');
    expect(await facts.innerText()).toContain('Ann Sender <ann@sender.test>');
    expect(await facts.innerText()).toContain('support+order-77@example.com');
    expect(await facts.innerText()).toContain('order-77');
    expect(await facts.locator('.fact', { hasText: 'Route' }).innerText()).toContain('support@example.com');
    expect(await page.locator('pre.mail-text').first().innerText()).toContain('Where is my parcel?');
    expect(await page.locator('pre.stripped-text').innerText()).toBe('Where is my parcel?');
    // Every header as it arrived, the Subject among them.
    const subjectHeader = page
      .locator('table.data tbody tr')
      .filter({ has: page.locator('th', { hasText: /^subject$/i }) });
    expect(await subjectHeader.locator('td').innerText()).toBe(subject);
    await browser.screenshot('inbound-message');

    expectFrameGuards();
  });

  it('downloads an attachment and the raw message, as the API serves them', async () => {
    await open(`${inboundPath()}/${message.id}`, subject);
    const notes = await download(page.getByRole('button', { name: 'Download notes.txt' }));
    expect(notes.name).toBe('notes.txt');
    expect(notes.bytes.toString()).toBe('order 77, two boxes\n');
    const logo = await download(page.getByRole('button', { name: 'Download logo.png' }));
    expect(logo.bytes.equals(PIXEL_PNG)).toBe(true);

    const raw = await download(page.getByRole('button', { name: 'Download raw message' }));
    expect(raw.name).toBe(`${message.id}.eml`);
    const served = await fetch(`${stack.admin}/inbound/emails/${message.id}/raw`, {
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    expect(served.status).toBe(200);
    expect(raw.bytes.equals(Buffer.from(await served.arrayBuffer()))).toBe(true);
    expect(raw.bytes.toString()).toContain(`Subject: ${subject}`);
    expectFrameGuards();
  });
});

describe('replies', () => {
  it("shows a reply on the answered email's timeline, linked both ways", async () => {
    const sent = await call('POST', `${stack.api}/emails`, {
      token: stack.apiKey,
      body: { from: 'shop@example.com', to: ['bob@sender.test'], subject: 'Your receipt', text: 'Thanks!' },
    });
    expect(sent.status, sent.text).toBe(200);
    const emailId = sent.body.id as string;
    const messageId = await eventually(async () => {
      const res = await call('GET', `${stack.api}/emails/${emailId}`, { token: stack.apiKey });
      return res.body.message_id ? (res.body.message_id as string) : undefined;
    });

    const subject = 'Re: Your receipt';
    await deliverInbound(stack, {
      from: 'Bob <bob@sender.test>',
      to: 'support@example.com',
      subject,
      text: 'Got it, thanks.\n\n> Thanks!\n',
      inReplyTo: messageId,
      references: [messageId],
    });
    const reply = await waitInInbox(subject);
    expect(reply.reply_to_email_id).toBe(emailId);

    // The email's timeline: a reply event whose inbound_id opens the message.
    await open(`/emails/${emailId}`, 'Events');
    const event = page.locator('.timeline-item[data-event="reply"]');
    await event.waitFor();
    expect(await event.innerText()).toContain('bob@sender.test');
    await event.getByRole('link', { name: reply.id }).click();
    await page.getByRole('heading', { level: 2, name: subject }).waitFor();

    // And the message links back to the email it answers.
    await page.getByRole('link', { name: `our email ${emailId}` }).click();
    await page.getByRole('heading', { level: 1, name: 'Your receipt' }).waitFor();
    await browser.screenshot('inbound-reply');
  });
});

describe('paging', () => {
  it('pages the inbox, newest first', async () => {
    const before = (await inbox()).total;
    // Enough for a second page of 20.
    for (let i = 0; i < 21 - before; i += 1)
      await deliverInbound(stack, {
        from: 'bulk@sender.test',
        to: 'support@example.com',
        subject: `Bulk ${i}`,
        text: 'x',
      });
    await eventually(async () => (await inbox()).total >= 21);
    const newest = (await inbox()).inbound_emails[0]!;
    await open(inboundPath(), 'Inbox');
    expect(await page.locator('.inbox table.data tbody tr').count()).toBe(20);
    expect(await page.locator('.inbox table.data tbody tr').first().innerText()).toContain(newest.subject);
    await page.getByRole('navigation', { name: 'Inbox pages' }).getByRole('button', { name: 'Next' }).click();
    await expect.poll(() => page.locator('.inbox table.data tbody tr').count()).toBe((await inbox()).total - 20);
    expect(page.url()).toContain('page=2');
  });
});
