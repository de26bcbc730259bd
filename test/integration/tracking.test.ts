import { beforeAll, describe, expect, it } from 'vitest';
import { createLinkTracker, type LinkTracker } from '../../src/delivery/message/tracking.js';
import { admin } from '../helpers/admin-fixtures.js';
import { call, eventually, validEmail } from '../helpers/http.js';
import { freePort } from '../helpers/ports.js';
import { useStack } from '../helpers/use-stack.js';
import { trackingKeyOf } from '../helpers/stack-secrets.js';

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const GIF = Buffer.from('R0lGODlhAQABAIAAAP///wAAACH5BAEAAAAALAAAAAABAAEAAAICRAEAOw==', 'base64');
const UA = 'TrackingTest/1.0 (integration)';

// A fixed port, so that MAILER_PUBLIC_URL's default (http://HOST:PORT) is where the tracked links point.
const stack = useStack(async () => ({ PORT: String(await freePort()) }));
/** Signs with the service's own key, read from its database. */
let tracker: LinkTracker;

beforeAll(async () => {
  tracker = createLinkTracker({ baseUrl: stack.mailer.restUrl!, key: await trackingKeyOf(stack.mailer) });
  const domains = await admin<{ domains: { id: string; name: string }[] }>(
    stack,
    'GET',
    `/accounts/${stack.accountId}/domains`,
  );
  const domainId = domains.body.domains.find((d) => d.name === 'example.com')!.id;
  await admin(stack, 'PATCH', `/domains/${domainId}`, { open_tracking: true, click_tracking: true });
});

async function sendEmail(body: Record<string, unknown> = {}): Promise<string> {
  const res = await call('POST', `${stack.api}/emails`, { token: stack.apiKey, body: validEmail(body) });
  expect(res.status).toBe(200);
  return res.body.id as string;
}

const eventsOf = (emailId: string, type: 'open' | 'click') =>
  stack.mailer.sql<
    { data: Record<string, unknown> }[]
  >`select data from events where email_id = ${emailId} and type = ${type} order by id`;

/** GET without Authorization, as a mail client does; redirects are not followed. */
const fetchAsClient = (url: string) => fetch(url, { headers: { 'user-agent': UA }, redirect: 'manual' });

describe('GET /t/o/:token (the pixel)', () => {
  it('answers a transparent GIF that is never cached, and records an open with the spec data', async () => {
    const id = await sendEmail();
    const res = await fetchAsClient(tracker.pixelUrl(id));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/gif');
    expect(res.headers.get('cache-control')).toBe('no-store, private');
    expect(Buffer.from(await res.arrayBuffer())).toEqual(GIF);
    const [open] = await eventually(async () =>
      (await eventsOf(id, 'open')).length === 1 ? eventsOf(id, 'open') : undefined,
    );
    expect(open!.data).toEqual({ timestamp: expect.stringMatching(ISO), ip_address: '127.0.0.1', user_agent: UA });
  });

  it('answers the same GIF for a forged token or an unknown email, and records nothing', async () => {
    const id = await sendEmail();
    const signed = tracker.pixelUrl(id);
    const at = signed.length - 10;
    const forged = signed.slice(0, at) + (signed[at] === 'A' ? 'B' : 'A') + signed.slice(at + 1);
    const unknown = tracker.pixelUrl('em_01jzzzzzzzzzzzzzzzzzzzzzzz');
    for (const url of [forged, unknown, `${stack.mailer.restUrl}/t/o/not-a-token`]) {
      const res = await fetchAsClient(url);
      expect(res.status).toBe(200);
      expect(res.headers.get('cache-control')).toBe('no-store, private');
      expect(Buffer.from(await res.arrayBuffer())).toEqual(GIF);
    }
    expect(await eventsOf(id, 'open')).toEqual([]);
    expect(await stack.mailer.sql`select 1 from events where email_id = 'em_01jzzzzzzzzzzzzzzzzzzzzzzz'`).toHaveLength(
      0,
    );
  });
});

describe('GET /t/c/:token (a tracked link)', () => {
  it('redirects to the signed link and records a click with the spec data', async () => {
    const id = await sendEmail();
    const link = 'https://example.org/welcome?a=1&b=2';
    const res = await fetchAsClient(tracker.clickUrl(id, link));
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe(link);
    expect(res.headers.get('cache-control')).toBe('no-store, private');
    const [click] = await eventsOf(id, 'click');
    expect(click!.data).toEqual({
      timestamp: expect.stringMatching(ISO),
      ip_address: '127.0.0.1',
      user_agent: UA,
      link,
    });
  });

  it('answers 404 in the spec error form, never a redirect, for a forged or altered token', async () => {
    const id = await sendEmail();
    const signed = tracker.clickUrl(id, 'https://example.org/x');
    const token = signed.slice(signed.lastIndexOf('/') + 1);
    const bytes = Buffer.from(token, 'base64url');
    const retargeted = Buffer.concat([Buffer.from(`${id}\nhttps://evil.example/`), bytes.subarray(-16)]).toString(
      'base64url',
    );
    const otherKey = createLinkTracker({
      baseUrl: stack.mailer.restUrl!,
      key: 'another-key-of-enough-bytes-0123456789',
    });
    for (const url of [
      `${stack.mailer.restUrl}/t/c/${retargeted}`,
      `${stack.mailer.restUrl}/t/c/${token.slice(0, -4)}`,
      otherKey.clickUrl(id, 'https://evil.example/'),
      tracker.pixelUrl(id).replace('/t/o/', '/t/c/'),
      `${stack.mailer.restUrl}/t/c/`,
    ]) {
      const res = await fetchAsClient(url);
      expect(res.status, url).toBe(404);
      expect(res.headers.get('location')).toBeNull();
      expect(await res.json()).toEqual({ error: 'not found', message: expect.any(String) });
    }
    expect(await eventsOf(id, 'click')).toEqual([]);
  });

  it('redirects a signed link of an email that does not exist, recording nothing', async () => {
    const res = await fetchAsClient(tracker.clickUrl('em_01jzzzzzzzzzzzzzzzzzzzzzzy', 'https://example.org/gone'));
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe('https://example.org/gone');
  });
});

describe('tracking end to end', () => {
  it('end to end: HTML mail from a tracking domain carries a pixel and tracked links that record open and click', async () => {
    const html =
      '<html><body><p>Hi <a href="https://example.org/welcome?a=1&amp;b=2">welcome</a>, ' +
      '<a href="mailto:help@example.com">write</a> or <a data-mailer-track="false" href="https://example.org/private">this</a>.</p></body></html>';
    const id = await sendEmail({ html, text: 'Hi' });
    const msg = await eventually(async () => stack.sink.messages.find((m) => m.messageId === `<${id}@example.com>`));
    const sent = msg.parsed.html as string;

    const pixel = /<img src="([^"]+)" width="1" height="1" alt=""[^>]*><\/body>/.exec(sent)?.[1];
    expect(pixel, sent).toBe(tracker.pixelUrl(id));
    const hrefs = [...sent.matchAll(/href="([^"]+)"/g)].map((m) => m[1]!);
    expect(hrefs).toEqual([
      expect.stringMatching(/\/t\/c\/[A-Za-z0-9_-]+$/),
      'mailto:help@example.com',
      'https://example.org/private',
    ]);
    expect(hrefs[0]!.startsWith(`${stack.mailer.restUrl}/t/c/`)).toBe(true);

    expect((await fetchAsClient(pixel!)).status).toBe(200);
    const click = await fetchAsClient(hrefs[0]!);
    expect(click.status).toBe(302);
    expect(click.headers.get('location')).toBe('https://example.org/welcome?a=1&b=2');

    const opens = await eventually(async () =>
      (await eventsOf(id, 'open')).length > 0 ? eventsOf(id, 'open') : undefined,
    );
    expect(opens.map((e) => e.data)).toEqual([
      { timestamp: expect.stringMatching(ISO), ip_address: '127.0.0.1', user_agent: UA },
    ]);
    expect((await eventsOf(id, 'click')).map((e) => e.data)).toEqual([
      {
        timestamp: expect.stringMatching(ISO),
        ip_address: '127.0.0.1',
        user_agent: UA,
        link: 'https://example.org/welcome?a=1&b=2',
      },
    ]);
  });
});
