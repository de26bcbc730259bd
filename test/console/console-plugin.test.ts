import fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONSOLE_CSP, consolePlugin, locateStaticDir } from '../../src/console/console-plugin.js';

let app: FastifyInstance;
beforeAll(async () => {
  app = fastify();
  await consolePlugin({ publicUrl: 'https://mail.example.com/"><script>' })(app);
  await app.ready();
});
afterAll(async () => {
  await app.close();
});

describe('console plugin', () => {
  it('serves the page at /console and /console/ with a strict policy, never framed', async () => {
    for (const url of ['/console', '/console/']) {
      const res = await app.inject({ url });
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(res.headers['content-security-policy']).toBe(CONSOLE_CSP);
      expect(res.headers['x-frame-options']).toBe('DENY');
      expect(res.headers['x-content-type-options']).toBe('nosniff');
      expect(res.headers['referrer-policy']).toBe('no-referrer');
      expect(res.body).toContain('<script type="module" src="/console/js/main.js"></script>');
    }
    const directives = CONSOLE_CSP.split('; ');
    expect(directives).toContain("default-src 'self'");
    expect(directives).toContain("script-src 'self'");
    expect(directives).toContain("frame-ancestors 'none'");
    expect(CONSOLE_CSP).not.toMatch(/script-src[^;]*unsafe/);
  });

  it('writes the public URL into the page as an escaped attribute', async () => {
    const res = await app.inject({ url: '/console' });
    expect(res.body).toContain(
      '<meta name="mailer-public-url" content="https://mail.example.com/&quot;&gt;&lt;script&gt;" />',
    );
  });

  it('serves assets with their content types and revalidation by ETag', async () => {
    const types = {
      '/console/js/main.js': 'text/javascript; charset=utf-8',
      '/console/css/console.css': 'text/css; charset=utf-8',
      '/console/favicon.svg': 'image/svg+xml',
    };
    for (const [url, type] of Object.entries(types)) {
      const res = await app.inject({ url });
      expect(res.statusCode, url).toBe(200);
      expect(res.headers['content-type']).toBe(type);
      expect(res.headers['cache-control']).toBe('no-cache');
      const again = await app.inject({ url, headers: { 'if-none-match': res.headers.etag as string } });
      expect(again.statusCode).toBe(304);
      expect(again.body).toBe('');
    }
  });

  it('answers 404 for anything not in the static folder, traversal included', async () => {
    for (const url of [
      '/console/nope.js',
      '/console/../package.json',
      '/console/%2e%2e/package.json',
      '/console/js/../../console-plugin.ts',
      '/console/js',
    ]) {
      expect((await app.inject({ url })).statusCode, url).toBe(404);
    }
  });

  it("finds its static folder from src/ (and dist/ falls back to the checkout's src/)", () => {
    expect(locateStaticDir()).toMatch(/src\/console\/static\/$/);
  });
});
