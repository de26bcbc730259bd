/**
 * Headless Chromium (the system's, never downloaded) driving the console, with two guards every test
 * checks: no request may leave for a host other than loopback, and the page may log no errors.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';

const CHROMIUM = '/usr/bin/chromium';
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
const SCREENSHOTS = path.resolve('test-artifacts/console');
const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

export interface ConsoleBrowser {
  page: Page;
  /** URLs the page tried to reach off loopback (each was refused). */
  external: string[];
  /** Answers the errors logged since the last call, and forgets them. */
  takeErrors(): string[];
  screenshot(name: string): Promise<void>;
  close(): Promise<void>;
}

export async function launchConsoleBrowser(): Promise<ConsoleBrowser> {
  const browser: Browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  const context: BrowserContext = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  // The Copy buttons use the Clipboard API, which asks for permission outside a user's own browser.
  await context.grantPermissions(['clipboard-read', 'clipboard-write']);
  const external: string[] = [];
  await context.route('**/*', (route) => {
    const url = new URL(route.request().url());
    if (LOOPBACK.has(url.hostname)) return route.continue();
    external.push(url.href);
    return route.abort('blockedbyclient');
  });
  const page = await context.newPage();
  let errors: string[] = [];
  page.on('console', (msg) => {
    if (msg.type() === 'error') errors.push(msg.text());
  });
  page.on('pageerror', (err) => errors.push(`uncaught: ${err.message}`));
  await fs.mkdir(SCREENSHOTS, { recursive: true });
  return {
    page,
    external,
    takeErrors() {
      const taken = errors;
      errors = [];
      return taken;
    },
    async screenshot(name) {
      await page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`), fullPage: true });
    },
    async close() {
      await browser.close();
    },
  };
}
