import http from 'node:http';
import { beforeAll, describe, expect, it } from 'vitest';
import { admin } from '../helpers/admin-fixtures.js';
import { call, eventually, validEmail } from '../helpers/http.js';
import { useStack } from '../helpers/use-stack.js';

/**
 * MAILER_TRACKING_URL on a host name of its own: mail links there, the API serves tracking to requests for
 * that host only and nothing else to them, and answers set no cookie. The stack listens on 127.0.0.1; a
 * request "for" the tracking host is one with its Host header, as a browser sends through DNS and a proxy.
 */

const TRACKING_URL = 'http://track.mailer.test';
/** A reverse proxy of this stack (MAILER_TRUSTED_PROXIES), to show the reader's address is recorded through it. */
const PROXY = '127.0.0.12';
const stack = useStack({ MAILER_TRACKING_URL: TRACKING_URL, MAILER_TRUSTED_PROXIES: PROXY });

beforeAll(async () => {
  const domains = await admin<{ domains: { id: string; name: string }[] }>(
    stack,
    'GET',
    `/accounts/${stack.accountId}/domains`,
  );
  const domainId = domains.body.domains.find((d) => d.name === 'example.com')!.id;
  await admin(stack, 'PATCH', `/domains/${domainId}`, { open_tracking: true, click_tracking: true });
});

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** GET `path` of the stack's REST port with Host `host`, from `from` (a local address), as a mail client would. */
function get(host: string, path: string, opts: { from?: string; forwardedFor?: string } = {}): Promise<Answer> {
  const { port } = new URL(stack.mailer.restUrl!);
  const headers: Record<string, string> = { host, 'user-agent': 'TrackingHostTest/1.0' };
  if (opts.forwardedFor !== undefined) headers['x-forwarded-for'] = opts.forwardedFor;
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path, headers, localAddress: opts.from, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
  });
}

describe('MAILER_TRACKING_URL', () => {
  it("is where a sent email's pixel and tracked links point, served there without cookies and nowhere else", async () => {
    const html = '<html><body><p><a href="https://example.org/offer?x=1">offer</a></p></body></html>';
    const res = await call('POST', `${stack.api}/emails`, {
      token: stack.apiKey,
      body: validEmail({ html, text: 'Hi' }),
    });
    expect(res.status).toBe(200);
    const id = res.body.id as string;
    const msg = await eventually(async () => stack.sink.messages.find((m) => m.messageId === `<${id}@example.com>`));
    const sent = msg.parsed.html as string;
    const pixel = /<img src="([^"]+)" width="1"/.exec(sent)?.[1];
    const link = /<a href="([^"]+)">offer<\/a>/.exec(sent)?.[1];
    expect(pixel, sent).toMatch(/^http:\/\/track\.mailer\.test\/t\/o\/[A-Za-z0-9_-]+$/);
    expect(link, sent).toMatch(/^http:\/\/track\.mailer\.test\/t\/c\/[A-Za-z0-9_-]+$/);
    const pixelPath = new URL(pixel!).pathname;
    const linkPath = new URL(link!).pathname;

    // On the tracking host: the GIF and the redirect, no cookie; the reader's address through the trusted proxy.
    const image = await get('track.mailer.test', pixelPath);
    expect(image.status).toBe(200);
    expect(image.headers['content-type']).toBe('image/gif');
    expect(image.headers['set-cookie']).toBeUndefined();
    const click = await get('track.mailer.test', linkPath, { from: PROXY, forwardedFor: '198.51.100.23' });
    expect(click.status).toBe(302);
    expect(click.headers.location).toBe('https://example.org/offer?x=1');
    expect(click.headers['set-cookie']).toBeUndefined();
    // The hit is written within 500 ms of the answer at most: wait for it rather than race it.
    const [event] = await eventually(async () => {
      const rows = await stack.mailer.sql<
        { data: { ip_address: string } }[]
      >`select data from events where email_id = ${id} and type = 'click'`;
      return rows.length > 0 ? rows : undefined;
    });
    expect(event!.data.ip_address).toBe('198.51.100.23');

    // On the console's host (the stack's own address) the same signed link is no redirect.
    const restHost = new URL(stack.mailer.restUrl!).host;
    const refused = await get(restHost, linkPath);
    expect(refused.status).toBe(404);
    expect(refused.headers.location).toBeUndefined();
    expect(JSON.parse(refused.body)).toEqual({
      error: 'not found',
      message: `Tracking links are not served on this host: they are on ${TRACKING_URL}`,
    });
    expect((await get(restHost, pixelPath)).status).toBe(404);
  });

  it("serves the one-click unsubscribe URL of broadcast mail there too, and not on the console's host", async () => {
    const res = await call('POST', `${stack.api}/emails`, {
      token: stack.apiKey,
      body: validEmail({ stream: 'broadcast', topic: 'weekly' }),
    });
    expect(res.status, res.text).toBe(200);
    const id = res.body.id as string;
    const msg = await eventually(async () => stack.sink.messages.find((m) => m.messageId === `<${id}@example.com>`));
    // The raw header (mailparser turns List-Unsubscribe into an object).
    const header = /^List-Unsubscribe: (.*)$/im.exec(msg.raw.toString('latin1').replace(/\r\n[ \t]+/g, ' '))?.[1] ?? '';
    const url = /<(http:\/\/track\.mailer\.test\/u\/[a-z0-9_]+-[a-z2-7]+)>/.exec(header)?.[1];
    expect(url, header).toBeDefined();
    const path = new URL(url!).pathname;
    const page = await get('track.mailer.test', path);
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.headers['set-cookie']).toBeUndefined();
    const restHost = new URL(stack.mailer.restUrl!).host;
    const refused = await get(restHost, path);
    expect(refused.status).toBe(404);
    expect(JSON.parse(refused.body).message).toBe(
      `Tracking links are not served on this host: they are on ${TRACKING_URL}`,
    );
  });

  it("leaves the console and the APIs to the console's host", async () => {
    const restHost = new URL(stack.mailer.restUrl!).host;
    for (const path of ['/console', '/v1/mail/openapi.json', '/v1/mail/emails']) {
      const res = await get('track.mailer.test', path);
      expect(res.status, path).toBe(404);
      expect(JSON.parse(res.body).message).toBe(`route GET ${path} not found: this host serves tracking links only`);
    }
    expect((await get(restHost, '/console')).status).toBe(200);
    expect((await get('track.mailer.test', '/readyz')).status).toBe(200);
  });
});
