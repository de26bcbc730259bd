/**
 * Headless Chromium (the system's, never downloaded) driving the console, with two guards every test
 * checks: no request may leave for a host other than loopback, and the page may log no errors.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, expect } from 'vitest';

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
  // A step that waits longer than this fails naming its locator, well inside the test's own 60 s (a hung step
  // otherwise ends the test with nothing but "timed out").
  page.setDefaultTimeout(20_000);
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

/**
 * A console browser for the tests of the enclosing file: launched before the first, closed after the last,
 * and after each test the two guards (no request left loopback, the page logged no error the test did not
 * take). What is returned reads through to the browser once it is launched.
 */
export function useConsole(): ConsoleBrowser {
  let current: ConsoleBrowser | undefined;
  beforeAll(async () => {
    current = await launchConsoleBrowser();
  });
  afterAll(async () => {
    await current?.close();
  });
  afterEach(() => {
    if (!current) return;
    expect(current.external, 'requests that left loopback').toEqual([]);
    expect(current.takeErrors(), 'errors logged by the page').toEqual([]);
  });
  return new Proxy({} as ConsoleBrowser, {
    get(_target, key) {
      if (!current) throw new Error(`the browser is not launched yet (reading ${String(key)} outside a test or hook)`);
      return Reflect.get(current, key) as unknown;
    },
  });
}

/**
 * Signs in on the console's sign-in page with the admin token or an API key, as a user does, and waits for the
 * first page (`heading`, a level-1 heading: Accounts for the operator, the account's name for its key).
 */
export async function signInToConsole(
  page: Page,
  restUrl: string,
  credential: string,
  heading: string | RegExp,
): Promise<void> {
  await page.goto(`${restUrl}/console#/sign-in`);
  await page.getByLabel('Admin token or API key').fill(credential);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { level: 1, name: heading }).waitFor();
}
