import postgres from 'postgres';
import { describe, expect, it } from 'vitest';
import { createKey, createSender } from '../helpers/admin-fixtures.js';
import { call, eventually, expectValidationError } from '../helpers/http.js';
import { useStack } from '../helpers/use-stack.js';

/**
 * Templates over REST against the real service (CONTRACT.md "Templates"): the resource, its versions and
 * permissions, and sends that name a template (direct, batch, scheduled) rendered at acceptance, delivered to a
 * real SMTP server as rendered.
 */
const stack = useStack();

type Template = {
  id: string;
  name: string;
  alias?: string;
  subject: string;
  html: string;
  text: string;
  variables: { name: string; required: boolean; default?: unknown }[];
  localizations: Record<string, { subject?: string; html?: string; text?: string }>;
  version: number;
  published_version: number;
  latest_version: number;
  created_at: string;
  updated_at: string;
};

const api = <T = Record<string, unknown>>(method: string, path: string, body?: unknown, token = stack.apiKey) =>
  call<T>(method, `${stack.api}${path}`, { token, ...(body !== undefined ? { body } : {}) });

async function created(body: Record<string, unknown>, token = stack.apiKey): Promise<Template> {
  const res = await api<Template>('POST', '/templates', body, token);
  expect(res.status, res.text).toBe(200);
  return res.body;
}

const welcome = (alias: string) => ({
  name: 'Welcome',
  alias,
  subject: 'Welcome, {{name}}',
  html: '<p>Hello {{name}}, your plan is {{plan}}</p>',
  text: 'Hello {{name}}',
  variables: [{ name: 'plan', default: 'free' }],
  localizations: { de: { subject: 'Willkommen, {{name}}' } },
});

describe('the template resource', () => {
  it('creates version 1 published, edits into new versions, publishes, gets by id or alias', async () => {
    const t = await created(welcome('welcome-1'));
    expect(t).toMatchObject({
      name: 'Welcome',
      alias: 'welcome-1',
      subject: 'Welcome, {{name}}',
      version: 1,
      published_version: 1,
      latest_version: 1,
      variables: [{ name: 'plan', required: true, default: 'free' }],
      localizations: { de: { subject: 'Willkommen, {{name}}' } },
    });
    expect(t.id).toMatch(/^tpl_/);

    const edited = await api<Template>('PATCH', `/templates/${t.id}`, { subject: 'Hi {{name}}' });
    expect(edited.status, edited.text).toBe(200);
    expect(edited.body).toMatchObject({ version: 2, published_version: 1, subject: 'Hi {{name}}', html: t.html });

    // Sends keep the published version: version 1 renders until 2 is published.
    const before = await api('POST', `/templates/welcome-1/render`, { variables: { name: 'Ada' } });
    expect(before.body).toEqual({
      subject: 'Welcome, Ada',
      html: '<p>Hello Ada, your plan is free</p>',
      text: 'Hello Ada',
    });
    const published = await api<Template>('POST', `/templates/welcome-1/publish`, {});
    expect(published.body).toMatchObject({ version: 2, published_version: 2 });
    const after = await api('POST', `/templates/${t.id}/render`, { variables: { name: 'Ada' }, locale: 'de-AT' });
    // de-AT falls back on de for the subject; the body is the template's own.
    expect(after.body).toMatchObject({ subject: 'Willkommen, Ada', text: 'Hello Ada' });

    const v1 = await api<Template>('GET', `/templates/welcome-1/versions/1`);
    expect(v1.body).toMatchObject({ version: 1, subject: 'Welcome, {{name}}', published_version: 2 });
    expect((await api('GET', `/templates/welcome-1/versions/9`)).status).toBe(404);
    expectValidationError(await api('GET', `/templates/welcome-1/versions/abc`), 'a non-numeric version', /version/);
    expect((await api<Template>('GET', `/templates/${t.id}`)).body).toMatchObject({ version: 2, alias: 'welcome-1' });

    // An empty variables list removes the declarations: plan is then required.
    const cleared = await api<Template>('PATCH', `/templates/${t.id}`, { variables: [], localizations: {} });
    expect(cleared.body).toMatchObject({ version: 3, variables: [], localizations: {} });
    const needsPlan = await api('POST', `/templates/${t.id}/render`, { variables: { name: 'Ada' }, version: 3 });
    expectValidationError(needsPlan, 'a required variable missing', /^variables\.plan is required$/);

    const list = await api<{ templates: { id: string; subject: string; version: number }[]; total: number }>(
      'GET',
      '/templates?page_size=100',
    );
    expect(list.body.templates.find((x) => x.id === t.id)).toMatchObject({ subject: 'Hi {{name}}', version: 3 });
    expect(list.body.total).toBeGreaterThanOrEqual(1);
  });

  it('refuses a taken alias (409), content that does not compile (400 with line and column), and unknown fields', async () => {
    await created(welcome('taken'));
    const again = await api('POST', '/templates', welcome('taken'));
    expect(again.status, again.text).toBe(409);
    const broken = await api('POST', '/templates', { name: 'x', subject: 's', html: '<p>\n{{#if a}}open' });
    expectValidationError(broken, 'an unclosed block', /html does not compile at line \d+, column \d+/);
    const badPatch = await api('PATCH', '/templates/taken', { variables: [{ name: 'x', colour: 'red' }] });
    expectValidationError(badPatch, 'an unknown field of a variable', /variables\[0\]: unknown field "colour"/);
    const notList = await api('PATCH', '/templates/taken', { variables: { name: 'x' } });
    expect(notList.status, notList.text).toBe(400);
  });

  it('deletes: later reads are 404 and sends naming it are 400 naming template.id', async () => {
    const t = await created(welcome('short-lived'));
    const del = await api('DELETE', `/templates/${t.id}`);
    expect(del.body).toEqual({ success: true, message: `template ${t.id} deleted` });
    expect((await api('GET', `/templates/${t.id}`)).status).toBe(404);
    const send = await api('POST', '/emails', {
      from: 'sender@example.com',
      to: ['rcpt@example.net'],
      template: { id: 'short-lived', variables: { name: 'x' } },
    });
    expectValidationError(send, 'a deleted template', /^template\.id: /);
  });

  it('needs permission all to change templates; any key reads and renders; other accounts see nothing', async () => {
    const readOnly = await createKey(stack, stack.accountId, 'read_only');
    const sendOnly = await createKey(stack, stack.accountId, 'send_only');
    const t = await created(welcome('perm-check'));
    for (const key of [readOnly.key, sendOnly.key]) {
      expect((await api('POST', '/templates', welcome('nope'), key)).status).toBe(403);
      expect((await api('PATCH', `/templates/${t.id}`, { subject: 'x' }, key)).status).toBe(403);
      expect((await api('POST', `/templates/${t.id}/publish`, {}, key)).status).toBe(403);
      expect((await api('DELETE', `/templates/${t.id}`, undefined, key)).status).toBe(403);
      expect((await api('GET', `/templates/${t.id}`, undefined, key)).status).toBe(200);
      const r = await api('POST', `/templates/${t.id}/render`, { variables: { name: 'K' } }, key);
      expect(r.status, r.text).toBe(200);
    }
    const other = await createSender(stack, 'other templates', 'other-templates.example');
    for (const [method, path, body] of [
      ['GET', `/templates/${t.id}`],
      ['GET', `/templates/perm-check`],
      ['GET', `/templates/${t.id}/versions/1`],
      ['PATCH', `/templates/${t.id}`, { subject: 'stolen' }],
      ['POST', `/templates/${t.id}/publish`, {}],
      ['POST', `/templates/${t.id}/render`, { variables: { name: 'x' } }],
      ['DELETE', `/templates/${t.id}`],
    ] as const) {
      const res = await api(method, path, body, other.key);
      expect(res.status, `${method} ${path}: ${res.text}`).toBe(404);
    }
    const list = await api<{ templates: { id: string }[] }>('GET', '/templates', undefined, other.key);
    expect(list.body.templates).toEqual([]);
    const send = await api(
      'POST',
      '/emails',
      { from: 'a@other-templates.example', to: ['r@example.net'], template: { id: t.id } },
      other.key,
    );
    expectValidationError(send, "another account's template", /^template\.id: /);
    expect((await api<Template>('GET', `/templates/${t.id}`)).body.subject).toBe('Welcome, {{name}}');
  });
});

describe('sends that name a template', () => {
  it('renders at acceptance, stores and shows the rendered content with the template, and delivers it', async () => {
    const t = await created({
      name: 'Receipt',
      alias: 'receipt-send',
      subject: 'Receipt for {{name}}',
      html: '<p>{{name}}</p><ul>{{#each items}}<li>{{this}}</li>{{/each}}</ul>',
      text: '{{name}}: {{#each items}}{{this}};{{/each}}',
    });
    const res = await api<{ id: string }>('POST', '/emails', {
      from: 'sender@example.com',
      to: ['tpl-rcpt@example.net'],
      template: { id: 'receipt-send', variables: { name: '<Ada & Co>', items: ['tea', 'cake'] }, locale: 'fr' },
    });
    expect(res.status, res.text).toBe(200);
    const email = await api<Record<string, unknown>>('GET', `/emails/${res.body.id}`);
    expect(email.body).toMatchObject({
      subject: 'Receipt for <Ada & Co>',
      html: '<p>&lt;Ada &amp; Co&gt;</p><ul><li>tea</li><li>cake</li></ul>',
      text: '<Ada & Co>: tea;cake;',
      template: { id: t.id, version: 1, locale: 'fr' },
    });
    const delivered = await eventually(async () =>
      stack.sink.messages.find((m) => m.envelopeTo.includes('tpl-rcpt@example.net')),
    );
    expect(delivered.parsed.subject).toBe('Receipt for <Ada & Co>');
    expect(delivered.parsed.text?.trim()).toBe('<Ada & Co>: tea;cake;');

    // A send of its own content has no template.
    const plain = await api<{ id: string }>('POST', '/emails', {
      from: 'sender@example.com',
      to: ['r@example.net'],
      subject: 's',
      text: 't',
    });
    expect((await api('GET', `/emails/${plain.body.id}`)).body.template).toBeUndefined();
  });

  it('sends render the newly published version at once, whichever process published it, and a deleted one is refused', async () => {
    const t = await created({ name: 'Live', alias: 'live-version', subject: 'v1 {{n}}', text: 'x' });
    const send = async () => {
      const res = await api<{ id: string }>('POST', '/emails', {
        from: 'sender@example.com',
        to: ['live@example.net'],
        template: { id: 'live-version', variables: { n: '!' } },
      });
      if (res.status !== 200) return res;
      return (await api<{ subject: string; template: { version: number } }>('GET', `/emails/${res.body.id}`)).body;
    };
    expect(await send()).toMatchObject({ subject: 'v1 !', template: { version: 1 } });
    // Through this process: an edit and a publish.
    await api('PATCH', `/templates/${t.id}`, { subject: 'v2 {{n}}' });
    expect(await send()).toMatchObject({ subject: 'v1 !', template: { version: 1 } });
    await api('POST', `/templates/${t.id}/publish`, {});
    expect(await send()).toMatchObject({ subject: 'v2 !', template: { version: 2 } });
    // As another API process would: written to the database, which notifies every process at commit.
    const sql = postgres(stack.databaseUrl, { max: 1, onnotice: () => {} });
    try {
      await sql`update templates set published_version = 1 where id = ${t.id}`;
      // Well within the 10 s an entry could otherwise live: the notification, not the expiry, makes it.
      await eventually(
        async () => ((await send()) as { template?: { version: number } }).template?.version === 1,
        3_000,
      );
      await sql`update templates set deleted_at = now(), alias = null where id = ${t.id}`;
      await eventually(async () => ((await send()) as { status?: number }).status === 400, 3_000);
    } finally {
      await sql.end();
    }
  });

  it('refuses a template with subject, html or text, a missing variable, and renders past the limits', async () => {
    await created({ name: 'Strict', alias: 'strict-send', subject: 'Hi {{name}}', text: '{{body}}' });
    const base = { from: 'sender@example.com', to: ['r@example.net'] };
    expectValidationError(
      await api('POST', '/emails', { ...base, subject: 'own', template: { id: 'strict-send' } }),
      'both',
      /^template: give either a template or subject, html and text, not both$/,
    );
    expectValidationError(
      await api('POST', '/emails', { ...base, template: { id: 'strict-send', variables: { name: 'x' } } }),
      'a missing variable',
      /^template\.variables\.body is required$/,
    );
    expectValidationError(
      await api('POST', '/emails', { ...base, template: { id: 'strict-send', version: 7 } }),
      'a missing version',
      /^template\.version: /,
    );
    expectValidationError(
      await api('POST', '/emails', { ...base, template: { id: '' } }),
      'an empty id',
      /^template\.id is required$/,
    );
    // The rendered subject must be one line, as any send's.
    expectValidationError(
      await api('POST', '/emails', {
        ...base,
        template: { id: 'strict-send', variables: { name: 'a\r\nBcc: x', body: 'b' } },
      }),
      'a subject line break from a variable',
      /subject/,
    );
    // A body past the send limit (5 MB) from a variable repeated: refused while rendering.
    const big = 'x'.repeat(1024 * 1024);
    await created({ name: 'Big', alias: 'big-send', subject: 'b', text: '{{#each parts}}{{this}}{{/each}}' });
    const started = Date.now();
    const tooBig = await api('POST', '/emails', {
      ...base,
      template: { id: 'big-send', variables: { parts: [big, big, big, big, big, big] } },
    });
    expect(tooBig.status, tooBig.text).toBe(400);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('refuses a 640 MB-output template in under a second with a 400, the service answering meanwhile', async () => {
    await created({
      name: 'Bomb',
      alias: 'bomb',
      subject: 'b',
      text: '{{#each rows}}{{#each ../rows}}{{@root.cell}}{{/each}}{{/each}}',
    });
    // 800 × 800 rows of a 1,000-character cell: 640 MB of text.
    const variables = { rows: Array.from({ length: 800 }, (_, i) => i), cell: 'x'.repeat(1000) };
    let probes = 0;
    let slowestProbe = 0;
    let probing = true;
    const probe = (async () => {
      while (probing) {
        const t0 = Date.now();
        const res = await call('GET', `${stack.mailer.restUrl}/healthz`);
        expect(res.status).toBe(200);
        slowestProbe = Math.max(slowestProbe, Date.now() - t0);
        probes++;
      }
    })();
    try {
      for (const [path, body] of [
        ['/templates/bomb/render', { variables }],
        ['/emails', { from: 'sender@example.com', to: ['r@example.net'], template: { id: 'bomb', variables } }],
      ] as const) {
        const started = Date.now();
        const res = await api('POST', path, body);
        const took = Date.now() - started;
        expectValidationError(res, path, /text renders more than 5 MB|steps to render/);
        expect(took, `${path} took ${took} ms`).toBeLessThan(1000);
      }
    } finally {
      probing = false;
      await probe;
    }
    expect(probes).toBeGreaterThan(0);
    expect(slowestProbe).toBeLessThan(500);
  });

  it('refuses variables nested deeper than JSON readers go, as a 400', async () => {
    const n = 100_000;
    const deep = `{"body":${'['.repeat(n)}"x"${']'.repeat(n)}}`;
    for (const [path, rawBody] of [
      ['/templates/strict-send/render', `{"variables":${deep}}`],
      [
        '/emails',
        `{"from":"sender@example.com","to":["r@example.net"],"template":{"id":"strict-send","variables":${deep}}}`,
      ],
    ] as const) {
      const res = await call('POST', `${stack.api}${path}`, { token: stack.apiKey, rawBody });
      expectValidationError(res, path, /maximum recursion depth/);
    }
  });

  it('renders each batch item with its own variables, naming the bad item', async () => {
    const t = await created({ name: 'Merge', alias: 'merge-batch', subject: 'Hi {{name}}', text: 'Dear {{name}}' });
    const items = ['Ann', 'Bob', 'Cy'].map((name) => ({
      from: 'sender@example.com',
      to: [`${name.toLowerCase()}@example.net`],
      template: { id: 'merge-batch', variables: { name } },
    }));
    const bad = await api('POST', '/emails/batch', {
      emails: [...items, { ...items[0], template: { id: 'merge-batch' } }],
    });
    expectValidationError(
      bad,
      'a batch item without its variable',
      /^emails\[3\]\.template\.variables\.name is required$/,
    );

    const batch = await api<{ job_id: string }>('POST', '/emails/batch', { emails: items });
    expect(batch.status, batch.text).toBe(200);
    const list = await eventually(async () => {
      const r = await api<{ data: { id: string; subject: string }[] }>(
        'GET',
        `/emails?job_id=${batch.body.job_id}&page_size=10`,
      );
      return r.body.data.length === 3 ? r.body.data : undefined;
    });
    expect(list.map((e) => e.subject).sort()).toEqual(['Hi Ann', 'Hi Bob', 'Hi Cy']);
    const one = await api('GET', `/emails/${list[0]!.id}`);
    expect(one.body.template).toEqual({ id: t.id, version: 1, locale: '' });
  });

  it('schedules a templated email: rendered at acceptance, the template stamped on the email it becomes', async () => {
    const t = await created({ name: 'Later', alias: 'later-send', subject: 'Later, {{name}}', text: 'x' });
    const at = new Date(Date.now() + 2_000).toISOString();
    const res = await api<{ id: string }>('POST', '/emails/schedule', {
      from: 'sender@example.com',
      to: ['later@example.net'],
      scheduled_at: at,
      template: { id: 'later-send', variables: { name: 'Zoe' } },
    });
    expect(res.status, res.text).toBe(200);
    const scheduled = await api('GET', `/emails/scheduled/${res.body.id}`);
    expect(scheduled.body.subject).toBe('Later, Zoe');
    // An edit published after acceptance changes nothing: the email was rendered when it was accepted.
    await api('PATCH', `/templates/${t.id}`, { subject: 'Changed' });
    await api('POST', `/templates/${t.id}/publish`, {});
    const emailId = await eventually(async () => {
      const r = await api<{ data: { id: string }[] }>('GET', `/emails?job_id=${res.body.id}`);
      return r.body.data[0]?.id;
    }, 30_000);
    expect((await api('GET', `/emails/${emailId}`)).body).toMatchObject({
      subject: 'Later, Zoe',
      template: { id: t.id, version: 1, locale: '' },
    });
  });
});
