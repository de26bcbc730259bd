import crypto from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { consolePlugin } from '../../src/console/console-plugin.js';
import { separateTrackingHost, trackingHostPlugin, warnOfSharedTrackingHost } from '../../src/http/tracking-host.js';
import { trackingRoutes } from '../../src/http/tracking-routes.js';
import { createLogger } from '../../src/logger.js';
import { createLinkTracker } from '../../src/delivery/message/tracking.js';
import { createTrackingService } from '../../src/services/tracking-service.js';
import { buildTestRestApp } from '../helpers/in-memory-apps.js';

/**
 * MAILER_TRACKING_URL: the links in mail on a host of their own, and the REST port split by Host so that the
 * console's host serves no redirects and the tracking host serves nothing but them.
 */

const PUBLIC_URL = 'https://console.example.com';
/** Two files standing in for the console's (unit tests read no repository file but their fixtures). */
const CONSOLE_FIXTURE = fileURLToPath(new URL('../fixtures/console-static/', import.meta.url));
const TRACKING_URL = 'https://track.example.net';
const ID = 'em_01jtestemail0000000000000a';
const tracker = createLinkTracker({ baseUrl: TRACKING_URL, key: crypto.randomBytes(32) });

async function appWith(publicUrl: string, trackingUrl: string) {
  const tracking = createTrackingService({
    hits: { hit: async () => 'recorded' as const },
    tokens: tracker,
    now: () => new Date(),
    windowSeconds: 600,
    onError: () => {},
  });
  const { app } = await buildTestRestApp({
    publicUrl,
    plugins: [
      trackingHostPlugin({ publicUrl, trackingUrl }),
      trackingRoutes(tracking),
      consolePlugin({ publicUrl, staticDir: CONSOLE_FIXTURE }),
    ],
  });
  return (host: string, url: string) => app.inject({ method: 'GET', url, headers: { host } });
}

const pathOf = (url: string) => new URL(url).pathname;
const click = pathOf(tracker.clickUrl(ID, 'https://example.org/offer'));
const pixel = pathOf(tracker.pixelUrl(ID));

describe('MAILER_TRACKING_URL on a host of its own', () => {
  it('serves the pixel and tracked links on the tracking host only, without cookies', async () => {
    const get = await appWith(PUBLIC_URL, TRACKING_URL);
    for (const host of ['track.example.net', 'TRACK.example.net:443', 'track.example.net.']) {
      const redirect = await get(host, click);
      expect(redirect.statusCode, host).toBe(302);
      expect(redirect.headers.location).toBe('https://example.org/offer');
      expect(redirect.headers['set-cookie']).toBeUndefined();
      const image = await get(host, pixel);
      expect(image.statusCode).toBe(200);
      expect(image.headers['content-type']).toBe('image/gif');
      expect(image.headers['set-cookie']).toBeUndefined();
    }
    // On the console's host (or any other, or none) a signed link is no redirect.
    for (const host of ['console.example.com', 'console.example.com:8080', '10.0.0.7:8080', '']) {
      for (const path of [click, pixel]) {
        const res = await get(host, path);
        expect(res.statusCode, `${host} ${path}`).toBe(404);
        expect(res.headers.location).toBeUndefined();
        expect(res.json()).toEqual({
          error: 'not found',
          message: 'Tracking links are not served on this host: they are on https://track.example.net',
        });
      }
    }
  });

  it('serves the console and the APIs on any host but the tracking host, which keeps only the probes', async () => {
    const get = await appWith(PUBLIC_URL, TRACKING_URL);
    for (const path of [
      '/console',
      '/console/js/session.js',
      '/v1/mail/openapi.json',
      '/v1/mail/emails',
      '/v1/mail/admin/accounts',
      '/metrics',
    ]) {
      const res = await get('track.example.net', path);
      expect(res.statusCode, path).toBe(404);
      expect(res.json()).toEqual({
        error: 'not found',
        message: `route GET ${path} not found: this host serves tracking links only`,
      });
    }
    expect((await get('track.example.net', '/healthz')).statusCode).toBe(200);
    expect((await get('console.example.com', '/console')).statusCode).toBe(200);
    expect((await get('console.example.com', '/v1/mail/openapi.json')).statusCode).toBe(200);
    expect((await get('127.0.0.1:8080', '/v1/mail/openapi.json')).statusCode).toBe(200);
  });

  it("splits nothing while tracking shares the console's host name (the default), whatever the ports", async () => {
    expect(separateTrackingHost('http://127.0.0.1:8080', 'http://127.0.0.1:8080')).toBeUndefined();
    expect(separateTrackingHost('https://mail.example.com', 'https://MAIL.example.com:8443/track')).toBeUndefined();
    expect(separateTrackingHost('https://mail.example.com', 'https://t.mail.example.com')).toBe('t.mail.example.com');
    const get = await appWith('http://mail.example.com:8080', 'http://mail.example.com:9090');
    expect((await get('mail.example.com:8080', click)).statusCode).toBe(302);
    expect((await get('anything.example', click)).statusCode).toBe(302);
    expect((await get('mail.example.com:8080', '/console')).statusCode).toBe(200);
  });
});

describe('MAILER_TRACKING_URL, the setting', () => {
  it('defaults to MAILER_PUBLIC_URL (itself defaulting to http://HOST:PORT) and takes only an http(s) URL', () => {
    expect(loadConfig({}).trackingUrl).toBe('http://127.0.0.1:8080');
    expect(loadConfig({ HOST: '0.0.0.0', PORT: '9000' }).trackingUrl).toBe('http://0.0.0.0:9000');
    expect(loadConfig({ MAILER_PUBLIC_URL: PUBLIC_URL }).trackingUrl).toBe(PUBLIC_URL);
    expect(loadConfig({ MAILER_PUBLIC_URL: PUBLIC_URL, MAILER_TRACKING_URL: TRACKING_URL }).trackingUrl).toBe(
      TRACKING_URL,
    );
    for (const bad of ['track.example.net', 'ftp://track.example.net', 'javascript:alert(1)']) {
      expect(() => loadConfig({ MAILER_TRACKING_URL: bad }), bad).toThrow(
        `MAILER_TRACKING_URL must be an http:// or https:// URL, got "${bad}"`,
      );
    }
  });

  it("is warned about at start in production (NODE_ENV=production) while it shares the console's host", () => {
    const logged = (env: NodeJS.ProcessEnv) => {
      const lines: { level: number; msg: string; trackingUrl?: string }[] = [];
      const sink = new Writable({
        write(chunk: Buffer, _enc, done) {
          lines.push(JSON.parse(chunk.toString('utf8')) as (typeof lines)[number]);
          done();
        },
      });
      warnOfSharedTrackingHost(loadConfig(env), createLogger('info', 'test', sink));
      return lines;
    };
    const [warning, ...more] = logged({ NODE_ENV: 'production', MAILER_PUBLIC_URL: PUBLIC_URL });
    expect(more).toEqual([]);
    expect(warning).toMatchObject({ level: 40, trackingUrl: PUBLIC_URL });
    expect(warning!.msg).toContain('Set MAILER_TRACKING_URL to a URL on a host name of its own');
    expect(
      logged({
        NODE_ENV: 'production',
        MAILER_PUBLIC_URL: PUBLIC_URL,
        MAILER_TRACKING_URL: 'https://console.example.com:8443',
      }),
    ).toHaveLength(1);
    // Apart: nothing to say. In development (NODE_ENV anything else or unset) the default is fine.
    expect(
      logged({ NODE_ENV: 'production', MAILER_PUBLIC_URL: PUBLIC_URL, MAILER_TRACKING_URL: TRACKING_URL }),
    ).toEqual([]);
    expect(logged({ MAILER_PUBLIC_URL: PUBLIC_URL })).toEqual([]);
    expect(logged({ NODE_ENV: 'development' })).toEqual([]);
  });
});
