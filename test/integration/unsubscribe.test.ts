import nodemailer from 'nodemailer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { admin } from '../helpers/admin-fixtures.js';
import {
  expectDkimPass,
  MAILER_HOSTNAME,
  sendEmail,
  setUpSenderDomain,
  useMailWorld,
} from '../helpers/deliverability.js';
import { call, eventually } from '../helpers/http.js';
import { verifyAsReceiver } from '../helpers/mail-verifier.js';
import type { SinkMessage } from '../helpers/smtp-sink.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';

/**
 * One-click unsubscribe end to end (CONTRACT.md, "Streams, one-click unsubscribe and suppressions"): broadcast
 * mail through the relay (the stack's sink) with the RFC 8058 headers under a DKIM signature mailauth checks;
 * the URL's GET page and POST, and the mailto address at the inbound listener, as a recipient's client uses
 * them; what they write (one suppression, one event, one webhook).
 */
const world = useMailWorld('relay', { MAILER_WEBHOOK_ALLOW_PRIVATE: '1' });
const DOMAIN = 'news-unsub.test';
let receiver: WebhookReceiver;

beforeAll(async () => {
  await setUpSenderDomain(world, DOMAIN);
  receiver = await startWebhookReceiver();
  await admin(world.stack, 'POST', `/accounts/${world.stack.accountId}/webhooks`, {
    url: `${receiver.url}/unsubscribes`,
    events: ['unsubscribe'],
  });
});
afterAll(async () => {
  await receiver?.close();
});

const arrived = (recipient: string) =>
  eventually(
    async () =>
      world.stack.sink.messages.find((m) => m.envelopeTo.some((t) => t.toLowerCase() === recipient.toLowerCase())),
    45_000,
    50,
  );

/** Every instance of a header field of the message as it arrived, unfolded. */
function fields(message: SinkMessage, name: string): string[] {
  const head = message.raw
    .toString('latin1')
    .split('\r\n\r\n')[0]!
    .replace(/\r\n[ \t]+/g, ' ');
  return head
    .split('\r\n')
    .filter((line) => line.toLowerCase().startsWith(`${name.toLowerCase()}:`))
    .map((line) => line.slice(name.length + 1).trim());
}

/** A broadcast email to `to`, and the URL and mailto address its List-Unsubscribe gives. */
async function broadcast(to: string, extra: Record<string, unknown> = {}) {
  const id = await sendEmail(world.stack, { from: `News <news@${DOMAIN}>`, to: [to], stream: 'broadcast', ...extra });
  const message = await arrived(to);
  const [value = ''] = fields(message, 'List-Unsubscribe');
  const match = /^<(https?:\/\/[^>]+\/u\/([a-z0-9_]+-[a-z2-7]+))>, <mailto:(unsub-[^>]+)>$/.exec(value);
  expect(match, value).not.toBeNull();
  const token = match![2]!;
  return {
    id,
    message,
    url: `${world.stack.mailer.restUrl}/u/${token}`,
    publishedUrl: match![1]!,
    token,
    mailto: match![3]!,
  };
}

const suppressionsOf = (address: string) =>
  world.stack.mailer.sql<{ reason: string; scope: string; topic: string; email_id: string }[]>`
    select reason, scope, topic, email_id from suppressions where address = ${address} order by id`;
const eventsOf = (emailId: string) =>
  world.stack.mailer.sql<{ data: Record<string, unknown> }[]>`
    select data from events where email_id = ${emailId} and type = 'unsubscribe'`;

const oneClick = (url: string, init: { body?: string | FormData; headers?: Record<string, string> } = {}) =>
  fetch(url, {
    method: 'POST',
    headers: init.headers ?? { 'content-type': 'application/x-www-form-urlencoded' },
    body: init.body ?? 'List-Unsubscribe=One-Click',
    redirect: 'manual',
  });

describe('broadcast mail carries RFC 8058 one-click unsubscribe under its DKIM signature', () => {
  it('has List-Unsubscribe (URL and mailto) and List-Unsubscribe-Post once each, signed, whatever the caller gave', async () => {
    const { id, message, publishedUrl, mailto } = await broadcast('reader-1@example.net', {
      topic: 'weekly',
      headers: { 'list-unsubscribe': '<https://evil.example/u>', 'List-Unsubscribe-Post': 'x', 'X-Campaign': 'a' },
    });
    expect(publishedUrl.startsWith(`${world.stack.mailer.config.trackingUrl.replace(/\/$/, '')}/u/${id}-`)).toBe(true);
    expect(mailto).toMatch(new RegExp(`^unsub-${id}-[a-z2-7]{24}@rp\\.${DOMAIN.replace('.', '\\.')}$`));
    expect(fields(message, 'List-Unsubscribe')).toHaveLength(1);
    expect(fields(message, 'List-Unsubscribe-Post')).toEqual(['List-Unsubscribe=One-Click']);
    expect(fields(message, 'X-Campaign')).toEqual(['a']);
    const verdict = await verifyAsReceiver(message.raw, {
      ip: '127.0.0.1',
      helo: MAILER_HOSTNAME,
      mailFrom: message.envelopeFrom,
      dns: world.dns,
    });
    expectDkimPass(verdict, DOMAIN);
    const [signature = ''] = fields(message, 'DKIM-Signature');
    const signed = (/\bh=([^;]*)/.exec(signature)?.[1] ?? '').split(':').map((h) => h.trim().toLowerCase());
    expect(signed).toEqual(expect.arrayContaining(['list-unsubscribe', 'list-unsubscribe-post']));
  });

  it('transactional mail carries neither', async () => {
    await sendEmail(world.stack, { from: `News <news@${DOMAIN}>`, to: ['receipt@example.net'] });
    const message = await arrived('receipt@example.net');
    expect(fields(message, 'List-Unsubscribe')).toEqual([]);
    expect(fields(message, 'List-Unsubscribe-Post')).toEqual([]);
  });
});

describe('the unsubscribe URL', () => {
  it('GET answers an accessible page with a button that posts, and unsubscribes nobody', async () => {
    const { id, url, token } = await broadcast('reader-2@example.net', { topic: 'weekly' });
    for (const method of ['GET', 'HEAD', 'GET']) {
      const res = await fetch(url, { method, headers: { accept: 'text/html' } });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(res.headers.get('content-security-policy')).toMatch(/default-src 'none'.*form-action 'self'/);
      if (method === 'GET') {
        const html = await res.text();
        expect(html).toContain('<html lang="en">');
        expect(html).toMatch(/<form method="post" action="\/u\/[^"]+"/);
        expect(html).toContain(`action="/u/${token}"`);
        expect(html).toContain('<button type="submit">Unsubscribe</button>');
        expect(html).toContain('“weekly”');
        expect(html).not.toMatch(/<script/i);
      }
    }
    expect(await suppressionsOf('reader-2@example.net')).toEqual([]);
    expect(await eventsOf(id)).toEqual([]);
  });

  it('POST unsubscribes the recipient from the topic once, however often it is posted, and answers 200', async () => {
    const { id, url } = await broadcast('Reader-3@Example.net', { topic: 'weekly' });
    const first = await oneClick(url);
    expect(first.status).toBe(200);
    expect(await first.text()).toContain('You are unsubscribed');
    // Again, at once and later, as a form and as multipart/form-data (what some clients send).
    const form = new FormData();
    form.set('List-Unsubscribe', 'One-Click');
    const again = await Promise.all([oneClick(url), oneClick(url), fetch(url, { method: 'POST', body: form })]);
    expect(again.map((r) => r.status)).toEqual([200, 200, 200]);
    expect(await suppressionsOf('reader-3@example.net')).toEqual([
      { reason: 'unsubscribe', scope: 'broadcast', topic: 'weekly', email_id: id },
    ]);
    // The recipient as the email stored it (its domain in canonical form); the suppression by its lower-case key.
    const events = await eventsOf(id);
    expect(events.map((e) => e.data)).toEqual([{ recipient: 'Reader-3@example.net', topic: 'weekly' }]);
  });

  it('without a topic suppresses every broadcast topic; the event says topic null', async () => {
    const { id, url } = await broadcast('reader-4@example.net');
    expect((await oneClick(url, { body: '', headers: {} })).status).toBe(200);
    expect(await suppressionsOf('reader-4@example.net')).toEqual([
      { reason: 'unsubscribe', scope: 'broadcast', topic: '', email_id: id },
    ]);
    expect((await eventsOf(id)).map((e) => e.data)).toEqual([{ recipient: 'reader-4@example.net', topic: null }]);
  });

  it('a forged or altered token is a 404 that unsubscribes nobody, and a big body a 413', async () => {
    const { id, url, token } = await broadcast('reader-5@example.net', { topic: 'weekly' });
    const base = url.slice(0, url.length - token.length);
    const last = token.at(-1) === 'a' ? 'b' : 'a';
    const forged = [
      `${base}${token.slice(0, -1)}${last}`,
      `${base}em_01jzzzzzzzzzzzzzzzzzzzzzzz-${token.split('-')[1]}`,
      `${base}${id}`,
      `${base}${'a'.repeat(300)}`,
      `${base}%ff%00`,
    ];
    for (const bad of forged) {
      const post = await call('POST', bad, {
        rawBody: 'List-Unsubscribe=One-Click',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });
      expect([400, 404], `${bad}: ${post.text}`).toContain(post.status);
      expect(post.body).toMatchObject({ error: expect.any(String), message: expect.any(String) });
      const get = await call('GET', bad);
      expect([400, 404]).toContain(get.status);
      expect(get.body).toMatchObject({ error: expect.any(String) });
    }
    // A person's browser gets a page saying so.
    const page = await fetch(forged[0]!, { headers: { accept: 'text/html' } });
    expect(page.status).toBe(404);
    expect(await page.text()).toContain('This link is not valid');
    const big = await oneClick(url, { body: `List-Unsubscribe=One-Click&x=${'y'.repeat(10_000)}` });
    expect(big.status).toBe(413);
    expect(await suppressionsOf('reader-5@example.net')).toEqual([]);
    expect(await eventsOf(id)).toEqual([]);
  });

  it('a transactional email has no unsubscribe: a token signed for it would find nothing', async () => {
    // Signed as the service signs (a token for a transactional email is never published, but holds if leaked).
    const { createUnsubscribeTokens } = await import('../../src/delivery/message/unsubscribe-token.js');
    const { trackingKeyOf } = await import('../helpers/stack-secrets.js');
    const tokens = createUnsubscribeTokens(await trackingKeyOf(world.stack.mailer));
    const id = await sendEmail(world.stack, { from: `News <news@${DOMAIN}>`, to: ['receipt-2@example.net'] });
    const res = await oneClick(`${world.stack.mailer.restUrl}/u/${tokens.sign(id)}`);
    expect(res.status).toBe(404);
    expect(await suppressionsOf('receipt-2@example.net')).toEqual([]);
  });
});

/** Mails the unsubscribe address as a recipient's mail client does (a sender of its own, any content). */
async function mailTo(address: string): Promise<string> {
  const transport = nodemailer.createTransport({ url: world.stack.mailer.inboundUrl!, ignoreTLS: true });
  try {
    const info = await transport.sendMail({
      from: 'reader@example.net',
      to: address,
      subject: 'unsubscribe',
      text: 'unsubscribe',
    });
    return info.response;
  } finally {
    transport.close();
  }
}

describe('the mailto address', () => {
  it('unsubscribes exactly as the POST does, once', async () => {
    const { id, mailto } = await broadcast('reader-6@example.net', { topic: 'offers' });
    expect(await mailTo(mailto)).toMatch(/^250 /);
    expect(await mailTo(mailto.toUpperCase())).toMatch(/^250 /);
    expect(await suppressionsOf('reader-6@example.net')).toEqual([
      { reason: 'unsubscribe', scope: 'broadcast', topic: 'offers', email_id: id },
    ]);
    expect((await eventsOf(id)).map((e) => e.data)).toEqual([{ recipient: 'reader-6@example.net', topic: 'offers' }]);
  });

  it('refuses an unsub- address whose token this service did not sign (550 at RCPT TO)', async () => {
    const { id, mailto } = await broadcast('reader-7@example.net');
    const forged = mailto.replace(/-[a-z2-7]{24}@/, `-${'a'.repeat(24)}@`);
    await expect(mailTo(forged)).rejects.toMatchObject({ responseCode: 550 });
    expect(await eventsOf(id)).toEqual([]);
  });
});

describe('the unsubscribe event', () => {
  it('reaches a webhook subscribed to unsubscribe, and the events API filtered by type', async () => {
    const { id, url } = await broadcast('reader-8@example.net', { topic: 'weekly' });
    expect((await oneClick(url)).status).toBe(200);
    const hook = await eventually(async () =>
      receiver.on('/unsubscribes').find((h) => (h.body.email as { id?: string } | undefined)?.id === id),
    );
    expect(hook.body).toMatchObject({
      event: 'unsubscribe',
      email: { id, to: ['reader-8@example.net'] },
      data: { recipient: 'reader-8@example.net', topic: 'weekly' },
    });
    const feed = await call<{ events: { id: string; event: string; email: { id: string }; data: unknown }[] }>(
      'GET',
      `${world.stack.api}/events?type=unsubscribe&limit=1000`,
      { token: world.stack.apiKey },
    );
    expect(feed.status, feed.text).toBe(200);
    const shown = feed.body.events.filter((e) => e.email.id === id);
    expect(shown).toEqual([
      expect.objectContaining({
        id: hook.body.id,
        event: 'unsubscribe',
        data: { recipient: 'reader-8@example.net', topic: 'weekly' },
      }),
    ]);
  });
});

describe("the page's branding", () => {
  const account = () => `/accounts/${world.stack.accountId}`;

  it("shows the account's brand name and https logo, escaped, set through the management API", async () => {
    const { url } = await broadcast('reader-9@example.net', { topic: 'weekly' });
    const set = await admin<Record<string, unknown>>(world.stack, 'PATCH', account(), {
      brand_name: '  <Acme & "Co"> ',
      brand_logo_url: 'https://cdn.acme.example/logo.png?x=1&y=2',
    });
    expect(set.body).toMatchObject({
      brand_name: '<Acme & "Co">',
      brand_logo_url: 'https://cdn.acme.example/logo.png?x=1&y=2',
    });
    expect((await admin(world.stack, 'GET', account())).body).toMatchObject({ brand_name: '<Acme & "Co">' });
    const html = await (await fetch(url)).text();
    expect(html).toContain(
      '<img src="https://cdn.acme.example/logo.png?x=1&amp;y=2" alt="&lt;Acme &amp; &quot;Co&quot;&gt;">',
    );
    expect(html).toContain('“weekly” mail from &lt;Acme &amp; &quot;Co&quot;&gt;');
    expect(html).not.toContain('<Acme');
    const confirmed = await (await oneClick(url)).text();
    expect(confirmed).toContain('You will no longer receive “weekly” mail from &lt;Acme &amp; &quot;Co&quot;&gt;');

    // "" removes both: the page shows the account's own name and no image.
    const cleared = await admin<Record<string, unknown>>(world.stack, 'PATCH', account(), {
      brand_name: '',
      brand_logo_url: '',
    });
    expect(cleared.body).not.toHaveProperty('brand_name');
    expect(cleared.body).not.toHaveProperty('brand_logo_url');
    const plain = await (await fetch(url)).text();
    expect(plain).not.toContain('<img');
    expect(plain).toContain(`mail from ${String(cleared.body.name)}`);
  });

  it('refuses a logo URL that is not https, and a name with control characters or too long (400 naming the field)', async () => {
    for (const [body, field] of [
      [{ brand_logo_url: 'http://cdn.acme.example/logo.png' }, 'brand_logo_url'],
      [{ brand_logo_url: 'javascript:alert(1)' }, 'brand_logo_url'],
      [{ brand_logo_url: 'https://cdn.acme.example/a b.png' }, 'brand_logo_url'],
      [{ brand_logo_url: 'https://cdn.acme.example/"onerror="x' }, 'brand_logo_url'],
      [{ brand_logo_url: `https://cdn.acme.example/${'a'.repeat(2048)}` }, 'brand_logo_url'],
      [{ brand_name: 'Acme\nNews' }, 'brand_name'],
      [{ brand_name: 'x'.repeat(101) }, 'brand_name'],
    ] as const) {
      const res = await admin(world.stack, 'PATCH', account(), body, 400);
      expect(res.body, JSON.stringify(body)).toMatchObject({ error: 'validation error' });
      expect(String(res.body.message)).toContain(field);
    }
    expect((await admin(world.stack, 'GET', account())).body).not.toHaveProperty('brand_logo_url');
  });
});
