import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postWebhook, WEBHOOK_USER_AGENT } from '../../src/webhooks/post.js';

/** A real HTTP receiver on loopback whose answer each test chooses. */
let server: http.Server;
let base: string;
let handler: (req: http.IncomingMessage, body: string, res: http.ServerResponse) => void;
const received: { headers: http.IncomingHttpHeaders; body: string; url: string }[] = [];

beforeAll(async () => {
  server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      received.push({ headers: req.headers, body, url: req.url ?? '' });
      handler(req, body, res);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

describe('postWebhook', () => {
  it('POSTs the body with the given headers and a fixed User-Agent; keeps the status and the start of the answer', async () => {
    handler = (_req, _body, res) => res.writeHead(202).end(`accepted ${'x'.repeat(3000)}`);
    const r = await postWebhook(
      `${base}/hook`,
      '{"a":1}',
      { 'content-type': 'application/json', 'x-mail-event': 'delivery' },
      { allowPrivate: true },
    );
    expect(r.statusCode).toBe(202);
    expect(r.excerpt.startsWith('accepted ')).toBe(true);
    expect(r.excerpt.length).toBe(1024);
    expect(r.latencyMs).toBeGreaterThanOrEqual(0);
    const got = received.at(-1)!;
    expect(got.body).toBe('{"a":1}');
    expect(got.headers['user-agent']).toBe(WEBHOOK_USER_AGENT);
    expect(got.headers['x-mail-event']).toBe('delivery');
    expect(got.headers['content-type']).toBe('application/json');
  });

  it('reports a non-2xx answer as it is, and does not follow redirects', async () => {
    handler = (_req, _body, res) => res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data' }).end();
    const before = received.length;
    expect((await postWebhook(`${base}/r`, '{}', {}, { allowPrivate: true })).statusCode).toBe(302);
    expect(received.length).toBe(before + 1);
    handler = (_req, _body, res) => res.writeHead(500).end('boom');
    expect(await postWebhook(`${base}/e`, '{}', {}, { allowPrivate: true })).toMatchObject({
      statusCode: 500,
      excerpt: 'boom',
    });
  });

  it('gives up on a receiver slower than the time limit', async () => {
    handler = (_req, _body, res) => setTimeout(() => res.writeHead(200).end(), 1500);
    const r = await postWebhook(`${base}/slow`, '{}', {}, { allowPrivate: true, timeoutMs: 300 });
    expect(r.statusCode).toBe(0);
    expect(r.error).toMatch(/ETIMEDOUT/);
    expect(r.latencyMs).toBeLessThan(1400);
  });

  it('reports a refused connection as a network error', async () => {
    const r = await postWebhook('http://127.0.0.1:1/x', '{}', {}, { allowPrivate: true });
    expect(r.statusCode).toBe(0);
    expect(r.error).toMatch(/ECONNREFUSED/);
  });

  it('refuses loopback and private targets unless allowed, by literal address and by name, without connecting', async () => {
    handler = (_req, _body, res) => res.writeHead(200).end();
    const before = received.length;
    const port = new URL(base).port;
    for (const url of [`${base}/x`, `http://localhost:${port}/x`, `http://[::1]:${port}/x`]) {
      const r = await postWebhook(url, '{}', {}, { allowPrivate: false });
      expect(r.statusCode, url).toBe(0);
      expect(r.error, url).toMatch(/private or loopback/);
    }
    expect(received.length).toBe(before);
    expect((await postWebhook(`http://localhost:${port}/x`, '{}', {}, { allowPrivate: true })).statusCode).toBe(200);
  });
});
