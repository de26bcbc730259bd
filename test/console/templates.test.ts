/**
 * The console's templates pages in real headless Chromium against the whole service: the list, the editor with
 * its live preview (rendered by the service from unsaved content), saving versions, publishing, deleting, and
 * the preview's sandbox. What the page did is checked through the management API.
 * After each test: no request left loopback, and the page logged no error it was not expected to.
 */
import type { Locator, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { admin } from '../helpers/admin-fixtures.js';
import { ADMIN_TOKEN, startStack, type Stack } from '../helpers/stack.js';
import { launchConsoleBrowser, type ConsoleBrowser } from './browser.js';

let stack: Stack;
let browser: ConsoleBrowser;
let page: Page;

type Template = {
  id: string;
  name: string;
  alias?: string;
  subject: string;
  html: string;
  version: number;
  published_version: number;
  latest_version: number;
};

beforeAll(async () => {
  [stack, browser] = await Promise.all([
    startStack({ LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'error' }),
    launchConsoleBrowser(),
  ]);
  page = browser.page;
  await page.goto(`${stack.mailer.restUrl}/console`);
  await page.getByLabel('Admin token').fill(ADMIN_TOKEN);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { level: 1, name: 'Accounts' }).waitFor();
});
afterAll(async () => {
  await browser?.close();
  await stack?.stop();
});
afterEach(() => {
  expect(browser.external, 'requests that left loopback').toEqual([]);
  expect(browser.takeErrors(), 'errors logged by the page').toEqual([]);
});

const templatesPath = () => `/accounts/${stack.accountId}/templates`;
const templateApi = (template = '') => `${templatesPath()}${template ? `/${template}` : ''}`;
const getTemplate = async (template: string, version?: number) =>
  (await admin<Template>(stack, 'GET', `${templateApi(template)}${version ? `/versions/${version}` : ''}`)).body;

/** Opens a console view by its hash route and waits for a heading of its own. */
async function open(route: string, heading: string | RegExp, level = 2): Promise<void> {
  // From a blank page, so that opening the route already shown loads it afresh too.
  await page.goto('about:blank');
  await page.goto(`${stack.mailer.restUrl}/console#${route}`);
  await page.getByRole('heading', { level, name: heading }).waitFor();
}

const row = (text: string): Locator => page.locator('table.data tbody tr', { hasText: text });
const previewFrame = () => page.frameLocator('iframe.mail-frame');
const previewError = () => page.locator('.preview-error');
/** The console logs a refused request; these tests expect exactly the ones they provoke. */
const refused = (status: number) => expect.stringContaining(`the server responded with a status of ${status}`);

/** Opens the editor of a new template and waits for its first (empty) preview state. */
async function openNewEditor(): Promise<void> {
  await open(`${templatesPath()}/new`, 'New template');
  await expect.poll(() => page.locator('.preview-status').innerText()).toContain('Type HTML or text');
}

describe('console templates', () => {
  it('lists the templates made through the API, newest first, their names as text', async () => {
    await admin(stack, 'POST', templateApi(), {
      name: 'Welcome',
      alias: 'welcome',
      subject: 'Welcome {{name}}',
      html: '<p>Hi {{name}}</p>',
    });
    const receipt = (
      await admin<Template>(stack, 'POST', templateApi(), { name: 'Receipt', subject: 'Your receipt', text: 'Thanks' })
    ).body;
    await admin(stack, 'PATCH', templateApi(receipt.id), { text: 'Thanks again' });
    await admin(stack, 'POST', templateApi(), { name: '<b>Bold</b> name', subject: 's', text: 't' });

    await open(`/accounts/${stack.accountId}`, /./, 1);
    await page.getByRole('navigation', { name: 'Account sections' }).getByRole('link', { name: 'Templates' }).click();
    await page.getByRole('heading', { level: 2, name: 'Templates' }).waitFor();

    // Name, alias, subject, latest version, published version.
    const cells = async (text: string) => (await row(text).locator('th, td').allInnerTexts()).slice(0, 5);
    expect(await cells('Welcome')).toEqual([
      `Welcome\n${(await getTemplate('welcome')).id}`,
      'welcome',
      'Welcome {{name}}',
      '1',
      '1',
    ]);
    expect(await cells('Receipt')).toEqual([`Receipt\n${receipt.id}`, '—', 'Your receipt', '2', '1']);
    const names = await page.locator('table.data tbody th a').allInnerTexts();
    expect(names).toEqual(['<b>Bold</b> name', 'Receipt', 'Welcome']);
    expect(await page.locator('table.data tbody b').count()).toBe(0);
    await browser.screenshot('templates');

    await row('Welcome').getByRole('link', { name: 'Welcome' }).click();
    await page.getByRole('heading', { level: 2, name: 'Template Welcome' }).waitFor();
    expect(await page.getByLabel('Subject', { exact: true }).inputValue()).toBe('Welcome {{name}}');
    expect(await page.getByLabel('Alias', { exact: true }).inputValue()).toBe('welcome');
    // A stored template previews at once, its variables given their own names as sample values.
    expect(JSON.parse(await page.getByLabel('Sample values (JSON)').inputValue())).toEqual({ name: 'name' });
    await expect.poll(() => previewFrame().locator('p').innerText()).toBe('Hi name');
  });

  it('re-renders the preview through the service as the user types, debounced', async () => {
    await openNewEditor();
    const previews: string[] = [];
    page.on('request', (r) => {
      if (r.url().endsWith('/template-preview')) previews.push(r.postData() ?? '');
    });

    await page.getByLabel('Sample values (JSON)').fill('{"name": "<b>Ann</b>"}');
    await page.getByLabel('Subject', { exact: true }).fill('Hello {{name}}');

    // Typed key by key faster than the debounce: one request for the lot, not one a keystroke.
    const typed = '<p>Hi {{name}}</p>';
    const before = previews.length;
    await page.getByLabel('HTML', { exact: true }).pressSequentially(typed, { delay: 40 });
    await expect.poll(() => page.locator('.preview-subject').innerText()).toBe('Hello <b>Ann</b>');
    // The service escaped the value in the HTML (and only there): Handlebars ran there, not in the page.
    await expect.poll(() => previewFrame().locator('p').innerHTML()).toBe('Hi &lt;b&gt;Ann&lt;/b&gt;');
    expect(await previewFrame().locator('b').count()).toBe(0);
    const during = previews.length - before;
    expect(during).toBeGreaterThanOrEqual(1);
    expect(during).toBeLessThanOrEqual(2);
    expect(JSON.parse(previews.at(-1)!)).toMatchObject({
      subject: 'Hello {{name}}',
      html: typed,
      sample_variables: { name: '<b>Ann</b>' },
    });

    await page.getByLabel('Text', { exact: true }).fill('Text for {{name}}');
    await expect.poll(() => page.locator('pre.preview-text').innerText()).toBe('Text for <b>Ann</b>');

    // The locale picks a localization (its language, for de-CH), as a send would.
    await page.getByLabel('Localizations (JSON)').fill('{"de": {"html": "<p>Hallo {{name}}</p>"}}');
    await page.getByLabel('Locale').fill('de-CH');
    await expect.poll(() => previewFrame().locator('p').innerText()).toBe('Hallo <b>Ann</b>');
    expect(await page.locator('.preview-subject').innerText()).toBe('Hello <b>Ann</b>');
    await browser.screenshot('template-editor');
    // Previewing stored nothing.
    const { body } = await admin<{ total: number }>(stack, 'GET', templateApi());
    expect(body.total).toBe(3);
  });

  it("shows the service's message inline when the content does not render, and a bad JSON box by name", async () => {
    await openNewEditor();
    await page.getByLabel('Subject', { exact: true }).fill('Hi');
    await page.getByLabel('HTML', { exact: true }).fill('<p>ok</p>');
    await expect.poll(() => previewFrame().locator('p').innerText()).toBe('ok');
    expect(await previewError().isHidden()).toBe(true);

    await page.getByLabel('HTML', { exact: true }).fill('a\n{{/if}}');
    await expect
      .poll(() => previewError().innerText())
      .toMatch(/^template html does not compile at line 2, column \d+: /);
    expect(await page.locator('.preview-output').getAttribute('class')).toContain('stale');
    expect(browser.takeErrors()).toEqual([refused(400)]);

    await page.getByLabel('HTML', { exact: true }).fill('<p>{{who}}</p>');
    await expect.poll(() => previewError().innerText()).toBe('variables.who is required');
    expect(browser.takeErrors()).toEqual([refused(400)]);

    // A JSON box that does not parse is named without asking the service.
    await page.getByLabel('Variables (JSON)').fill('[{"name": "who", "default": "you"}');
    await expect.poll(() => previewError().innerText()).toMatch(/^Variables: not JSON/);
    expect(await page.getByLabel('Variables (JSON)').getAttribute('aria-invalid')).toBe('true');

    await page.getByLabel('Variables (JSON)').fill('[{"name": "who", "default": "you"}]');
    await expect.poll(() => previewFrame().locator('p').innerText()).toBe('you');
    expect(await previewError().isHidden()).toBe(true);
    expect(await page.locator('.preview-output').getAttribute('class')).not.toContain('stale');
  });

  it('creates a template, saves new versions and publishes the version picked', async () => {
    await openNewEditor();
    await page.getByLabel('Name', { exact: true }).fill('Editor made');
    await page.getByLabel('Alias', { exact: true }).fill('editor-made');
    await page.getByLabel('Subject', { exact: true }).fill('Hi {{name}}');
    await page.getByLabel('HTML', { exact: true }).fill('<p>v1 {{name}}</p>');
    await page.getByLabel('Variables (JSON)').fill('[{"name": "name", "default": "there"}]');
    await page.getByRole('button', { name: 'Create template' }).click();
    await page.getByRole('heading', { level: 2, name: 'Template Editor made' }).waitFor();
    const created = await getTemplate('editor-made');
    expect(created).toMatchObject({ name: 'Editor made', subject: 'Hi {{name}}', version: 1, published_version: 1 });
    expect(page.url()).toContain(`/templates/${created.id}`);
    expect(await page.locator('.version-line').innerText()).toMatch(/^Latest version 1, published version 1\./);
    // The sample values start from the declared defaults.
    expect(JSON.parse(await page.getByLabel('Sample values (JSON)').inputValue())).toEqual({ name: 'there' });

    await page.getByLabel('Subject', { exact: true }).fill('Hello {{name}}');
    expect(await page.locator('.unsaved').isVisible()).toBe(true);
    await page.getByRole('button', { name: 'Save as new version' }).click();
    await expect
      .poll(() => page.locator('.version-line').innerText())
      .toMatch(/^Latest version 2, published version 1 /);
    expect(await page.locator('.unsaved').isVisible()).toBe(false);
    expect(await getTemplate(created.id)).toMatchObject({
      subject: 'Hello {{name}}',
      version: 2,
      published_version: 1,
    });
    expect((await getTemplate(created.id, 1)).subject).toBe('Hi {{name}}');

    // The versions: the latest picked at first; each one viewed as stored.
    const versionPicker = page.getByLabel('Version', { exact: true });
    expect(await versionPicker.locator('option').allInnerTexts()).toEqual([
      'Version 2 (latest)',
      'Version 1 (published)',
    ]);
    await versionPicker.selectOption('1');
    await page.getByRole('button', { name: 'View version' }).click();
    const view = page.locator('.version-view');
    await expect
      .poll(() => view.locator('.fact', { hasText: 'Subject' }).locator('dd').innerText())
      .toBe('Hi {{name}}');
    expect(await view.locator('h3').textContent()).toBe('Version 1 published');

    await versionPicker.selectOption('2');
    await page.getByRole('button', { name: 'Publish version' }).click();
    await expect.poll(() => page.locator('.published-version').innerText()).toBe('2');
    expect((await getTemplate(created.id)).published_version).toBe(2);
    expect(await page.locator('.version-line').innerText()).toMatch(/^Latest version 2, published version 2\./);

    // An old version loaded into the editor and saved becomes the newest; publishing goes back as well.
    await versionPicker.selectOption('1');
    await page.getByRole('button', { name: 'View version' }).click();
    await page.getByRole('button', { name: 'Load version 1 into the editor' }).click();
    expect(await page.getByLabel('Subject', { exact: true }).inputValue()).toBe('Hi {{name}}');
    await page.getByRole('button', { name: 'Save as new version' }).click();
    await expect.poll(() => page.locator('.latest-version').innerText()).toBe('3');
    expect(await getTemplate(created.id)).toMatchObject({ subject: 'Hi {{name}}', version: 3, published_version: 2 });
    await versionPicker.selectOption('1');
    await page.getByRole('button', { name: 'Publish version' }).click();
    await expect.poll(() => page.locator('.published-version').innerText()).toBe('1');
    expect((await getTemplate(created.id)).published_version).toBe(1);
  });

  it('shows a refused save inline, storing nothing, and a corrected one renames the template', async () => {
    await open(`${templatesPath()}/editor-made`, 'Template Editor made');
    await page.getByLabel('Alias', { exact: true }).fill('Not An Alias');
    await page.getByRole('button', { name: 'Save as new version' }).click();
    await expect.poll(() => page.locator('.save-error').innerText()).toMatch(/^alias must be 1-64 characters/);
    expect(browser.takeErrors()).toEqual([refused(400)]);
    await page.getByLabel('Alias', { exact: true }).fill('welcome');
    await page.getByRole('button', { name: 'Save as new version' }).click();
    await expect.poll(() => page.locator('.save-error').innerText()).toMatch(/welcome/);
    expect(browser.takeErrors()).toEqual([refused(409)]);
    expect((await getTemplate('editor-made')).version).toBe(3);

    // Put right, the save goes through; a new name renames the editor's title and Delete button too.
    await page.getByLabel('Alias', { exact: true }).fill('editor-made');
    await page.getByLabel('Name', { exact: true }).fill('Editor renamed');
    await page.getByRole('button', { name: 'Save as new version' }).click();
    await page.getByRole('heading', { level: 2, name: 'Template Editor renamed' }).waitFor();
    expect(await page.locator('.save-error').isHidden()).toBe(true);
    expect(await getTemplate('editor-made')).toMatchObject({ name: 'Editor renamed', version: 4 });
  });

  it('deletes a template only once the operator confirms', async () => {
    const { id } = await getTemplate('editor-made');
    await open(`${templatesPath()}/${id}`, 'Template Editor renamed');
    await page.getByRole('button', { name: 'Delete template Editor renamed' }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete the template Editor renamed?' });
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'detached' });
    await getTemplate(id);

    await page.getByRole('button', { name: 'Delete template Editor renamed' }).click();
    await dialog.getByRole('button', { name: 'Delete template' }).click();
    await page.getByRole('heading', { level: 2, name: 'Templates' }).waitFor();
    await admin(stack, 'GET', templateApi(id), undefined, 404);
    await row('Welcome').waitFor();
    expect(await row('Editor renamed').count()).toBe(0);

    // And from the list.
    await page.getByRole('button', { name: 'Delete template Receipt' }).click();
    await page
      .getByRole('dialog', { name: 'Delete the template Receipt?' })
      .getByRole('button', { name: 'Delete template' })
      .click();
    await expect.poll(() => row('Receipt').count()).toBe(0);
    const { body } = await admin<{ templates: { name: string }[] }>(stack, 'GET', templateApi());
    expect(body.templates.map((t) => t.name)).not.toContain('Receipt');
  });

  it("runs no script in the preview, not even the console's own, which its CSP allows", async () => {
    await openNewEditor();
    // The console's own entry script, given the elements it looks for: run unsandboxed, in a frame of the
    // console's origin, it would route this frame to the accounts page with the admin token, filling #main.
    const html =
      '<p id="marker">preview</p><nav class="sidebar"></nav><main id="main"></main><button id="sign-out"></button>' +
      '<a class="skip-link"></a><div id="status"></div><script type="module" src="/console/js/main.js"></script>';
    await page.getByLabel('Subject', { exact: true }).fill('Scripted');
    await page.getByLabel('HTML', { exact: true }).fill(html);
    await expect.poll(() => previewFrame().locator('#marker').innerText()).toBe('preview');
    expect(await page.locator('iframe.mail-frame').getAttribute('sandbox')).toBe('');

    // The same HTML in a frame without the sandbox, added to the console page: the script runs there (so it
    // is one the console's CSP lets run, in the time waited), and by then it has not run in the preview.
    await page.evaluate(
      `(() => { const f = document.createElement('iframe'); f.id = 'unsandboxed'; f.srcdoc = ${JSON.stringify(html)}; document.body.append(f); })()`,
    );
    const control = page.frameLocator('#unsandboxed').locator('#main');
    await expect.poll(() => control.innerHTML(), { timeout: 10_000 }).not.toBe('');
    expect(await previewFrame().locator('#main').innerHTML()).toBe('');
    // Chromium says why: the frame is sandboxed (it also refuses the module to the frame's opaque origin).
    const errors = browser.takeErrors();
    expect(errors).toEqual(
      expect.arrayContaining([expect.stringContaining("Blocked script execution in 'about:srcdoc'")]),
    );
    expect(errors.filter((e) => e.startsWith('uncaught'))).toEqual([]);
  });
});
