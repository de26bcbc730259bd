import { describe, expect, it } from 'vitest';
import { admin, createAccount } from '../helpers/admin-fixtures.js';
import { call, expectValidationError } from '../helpers/http.js';
import { ADMIN_TOKEN } from '../helpers/stack.js';
import { useStack } from '../helpers/use-stack.js';

/**
 * An account's templates through the management API (the console's backend): the public template calls under
 * /accounts/:id, the template named by id or alias, plus the editor's preview of content not stored.
 */
const stack = useStack();

type Template = { id: string; alias?: string; subject: string; version: number; published_version: number };

describe('templates in the management API', () => {
  it("creates, lists, edits, publishes, renders and deletes an account's template, as its keys see it", async () => {
    const base = `/accounts/${stack.accountId}/templates`;
    const t = (
      await admin<Template>(stack, 'POST', base, {
        name: 'Console',
        alias: 'console-made',
        subject: 'Hi {{name}}',
        html: '<b>{{name}}</b>',
      })
    ).body;
    expect(t).toMatchObject({ alias: 'console-made', version: 1, published_version: 1 });
    // The account's own API key sees it.
    const viaKey = await call<Template>('GET', `${stack.api}/templates/console-made`, { token: stack.apiKey });
    expect(viaKey.body.id).toBe(t.id);

    const list = await admin<{ templates: { id: string }[]; total: number }>(stack, 'GET', `${base}?page_size=50`);
    expect(list.body.templates.map((x) => x.id)).toContain(t.id);

    const edited = await admin<Template>(stack, 'PATCH', `${base}/console-made`, { subject: 'Hello {{name}}' });
    expect(edited.body).toMatchObject({ id: t.id, version: 2, published_version: 1, subject: 'Hello {{name}}' });
    const v1 = await admin<Template>(stack, 'GET', `${base}/${t.id}/versions/1`);
    expect(v1.body).toMatchObject({ version: 1, subject: 'Hi {{name}}' });

    const before = await admin(stack, 'POST', `${base}/${t.id}/render`, { variables: { name: '<Ann>' } });
    expect(before.body).toEqual({ subject: 'Hi <Ann>', html: '<b>&lt;Ann&gt;</b>', text: '' });
    const published = await admin<Template>(stack, 'POST', `${base}/${t.id}/publish`, { version: 2 });
    expect(published.body.published_version).toBe(2);
    const after = await admin(stack, 'POST', `${base}/${t.id}/render`, { variables: { name: 'Ann' } });
    expect(after.body.subject).toBe('Hello Ann');
    const missing = await call('POST', `${stack.admin}${base}/${t.id}/render`, { token: 'x', body: {} });
    expect(missing.status).toBe(401);

    await admin(stack, 'DELETE', `${base}/${t.id}`);
    await admin(stack, 'GET', `${base}/${t.id}`, undefined, 404);
  });

  it('previews content not stored, with its errors as a create or a render would give them', async () => {
    const preview = `/accounts/${stack.accountId}/template-preview`;
    const ok = await admin(stack, 'POST', preview, {
      subject: 'Hallo {{name}}',
      html: '<p>{{#each items}}{{this}},{{/each}}</p>',
      variables: [{ name: 'items', default: ['a', 'b'] }],
      localizations: { de: { html: '<p>de</p>' } },
      sample_variables: { name: 'Eva' },
      locale: 'de-CH',
    });
    expect(ok.body).toEqual({ subject: 'Hallo Eva', html: '<p>de</p>', text: '' });
    const noVar = await call('POST', `${stack.admin}${preview}`, {
      token: ADMIN_TOKEN,
      body: { subject: 'Hi {{name}}', text: 'x' },
    });
    expectValidationError(noVar, 'a required variable missing', /^variables\.name is required$/);
    const broken = await admin(stack, 'POST', preview, { subject: 's', html: 'a\n{{/if}}' }, 400);
    expect(broken.body.message).toMatch(/^template html does not compile at line 2/);
    // Nothing was stored.
    const list = await admin<{ total: number }>(stack, 'GET', `/accounts/${stack.accountId}/templates`);
    expect(list.body.total).toBe(0);
  });

  it('answers 404 for an unknown account and for another account naming the template', async () => {
    await admin(stack, 'GET', '/accounts/acc_nope/templates', undefined, 404);
    await admin(stack, 'POST', '/accounts/acc_nope/templates', { name: 'x', subject: 'y' }, 404);
    const mine = (
      await admin<Template>(stack, 'POST', `/accounts/${stack.accountId}/templates`, {
        name: 'n',
        subject: 's',
        text: 't',
      })
    ).body;
    const other = await createAccount(stack, 'template neighbour');
    await admin(stack, 'GET', `/accounts/${other}/templates/${mine.id}`, undefined, 404);
    await admin(stack, 'PATCH', `/accounts/${other}/templates/${mine.id}`, { subject: 'x' }, 404);
    await admin(stack, 'DELETE', `/accounts/${other}/templates/${mine.id}`, undefined, 404);
    const unknownField = await admin(
      stack,
      'PATCH',
      `/accounts/${stack.accountId}/templates/${mine.id}`,
      { colour: 1 },
      400,
    );
    expect(unknownField.body.message).toMatch(/colour/);
    await admin(stack, 'DELETE', `/accounts/${stack.accountId}/templates/${mine.id}`);
  });
});
