import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTemplatesRepo } from '../../src/db/index.js';
import { createSql, type Sql } from '../../src/db/sql.js';
import type { TemplateContent } from '../../src/domain/entities/templates.js';
import type { TemplateInput } from '../../src/domain/template-fields.js';
import { AppError, invalid } from '../../src/errors.js';
import { createTemplatesService, type TemplatesService } from '../../src/services/templates-service.js';
import { createTestDatabase } from '../helpers/stack.js';

/**
 * Templates in a real PostgreSQL (migration 22, db/repos/templates-repo.ts, services/templates-service.ts):
 * versions, publish, aliases unique per account among live templates, soft delete, account isolation, and
 * concurrent edits that each get their own version without losing another's change.
 */

let sql: Sql;
let service: TemplatesService;
/** What the compile check was last handed, and whether it refuses. */
let compileSeen: TemplateContent[] = [];
let compileRefuses = false;

const A = 'acc_templates_a';
const B = 'acc_templates_b';

beforeAll(async () => {
  sql = createSql(await createTestDatabase(), { max: 12 });
  for (const id of [A, B]) await sql`insert into accounts (id, name) values (${id}, ${id})`;
  service = createTemplatesService({
    templates: createTemplatesRepo(sql),
    checkCompiles: (content) => {
      compileSeen.push(content);
      if (compileRefuses) throw invalid('html: Parse error on line 1, column 4');
    },
  });
});
afterAll(async () => {
  await sql.end();
});

const input = (over: Partial<TemplateInput> = {}): TemplateInput => ({
  name: 'Welcome',
  subject: 'Hello {{name}}',
  html: '<p>Hi {{name}}</p>',
  text: 'Hi {{name}}',
  variables: [{ name: 'name' }, { name: 'plan', required: false, default: 'free' }],
  localizations: { de: { subject: 'Hallo {{name}}' } },
  ...over,
});

/** The AppError `run` rejects with. */
async function failure(run: Promise<unknown>): Promise<AppError> {
  const err: unknown = await run.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(AppError);
  return err as AppError;
}

describe('templates: create, read, list', () => {
  it('creates version 1, published, readable by id and by alias', async () => {
    const t = await service.create(A, input({ alias: 'welcome' }));
    expect(t.id).toMatch(/^tpl_[0-9a-z]{26}$/);
    expect(t).toMatchObject({
      accountId: A,
      name: 'Welcome',
      alias: 'welcome',
      version: 1,
      latestVersion: 1,
      publishedVersion: 1,
      subject: 'Hello {{name}}',
      html: '<p>Hi {{name}}</p>',
      text: 'Hi {{name}}',
      variables: [
        { name: 'name', required: true },
        { name: 'plan', required: false, default: 'free' },
      ],
      localizations: { de: { subject: 'Hallo {{name}}' } },
    });
    expect(t.createdAt).toBeInstanceOf(Date);
    expect(t.updatedAt).toEqual(t.createdAt);
    expect(await service.get(A, t.id)).toEqual(t);
    expect(await service.get(A, 'welcome')).toEqual(t);
    expect(await service.getVersion(A, 'welcome', 1)).toEqual(t);
    const [row] = await sql<
      { n: number }[]
    >`select count(*)::int as n from template_versions where template_id = ${t.id}`;
    expect(row!.n).toBe(1);
  });

  it('a missing template is 404; a bad field is 400 before anything is stored', async () => {
    expect((await failure(service.get(A, 'tpl_00000000000000000000000000'))).status).toBe(404);
    expect((await failure(service.get(A, 'no-such-alias'))).message).toBe('template no-such-alias not found');
    const before = await service.list(A, { page: 0, pageSize: 0 });
    const bad = await failure(service.create(A, input({ alias: 'Not An Alias' })));
    expect(bad.status).toBe(400);
    expect(bad.message).toBe("alias must be 1-64 characters of a-z, 0-9, '.', '_' or '-'");
    expect((await failure(service.create(A, input({ subject: '' })))).message).toBe('subject is required');
    expect((await service.list(A, { page: 0, pageSize: 0 })).total).toBe(before.total);
  });

  it('lists the live templates of the account newest first, a page at a time, with the total', async () => {
    const made = [];
    for (let i = 0; i < 5; i++) made.push(await service.create(B, input({ name: `list ${i}`, alias: `list-${i}` })));
    await service.delete(B, 'list-2');
    const all = await service.list(B, { page: 1, pageSize: 100 });
    expect(all.total).toBe(4);
    expect(all.templates.map((t) => t.name)).toEqual(['list 4', 'list 3', 'list 1', 'list 0']);
    // A summary: the row and the latest subject, no bodies.
    expect(all.templates[0]).toEqual({
      id: made[4]!.id,
      accountId: B,
      name: 'list 4',
      alias: 'list-4',
      latestVersion: 1,
      publishedVersion: 1,
      createdAt: made[4]!.createdAt,
      updatedAt: made[4]!.updatedAt,
      subject: 'Hello {{name}}',
    });
    const second = await service.list(B, { page: 2, pageSize: 3 });
    expect(second).toEqual({ templates: [all.templates[3]], total: 4 });
    expect((await failure(service.list(B, { page: 1, pageSize: 101 }))).message).toBe(
      'page_size is 101; the maximum is 100',
    );
    for (const t of made) await sql`update templates set deleted_at = now() where id = ${t.id}`;
  });
});

describe('templates: versions and publish', () => {
  it('an edit is version n + 1 from the latest with the given fields; sends keep the published version', async () => {
    const v1 = await service.create(A, input({ alias: 'receipt', name: 'Receipt' }));
    const v2 = await service.edit(A, 'receipt', { subject: 'Your receipt, {{name}}' });
    expect(v2).toMatchObject({
      id: v1.id,
      name: 'Receipt',
      alias: 'receipt',
      version: 2,
      latestVersion: 2,
      publishedVersion: 1,
      subject: 'Your receipt, {{name}}',
      html: v1.html,
      text: v1.text,
      variables: v1.variables,
      localizations: v1.localizations,
    });
    expect(v2.updatedAt.getTime()).toBeGreaterThanOrEqual(v1.updatedAt.getTime());
    expect(await service.get(A, v1.id)).toEqual(v2);
    // Version 1 as it was, with the template's own row as it is now.
    expect(await service.getVersion(A, v1.id, 1)).toMatchObject({ version: 1, subject: 'Hello {{name}}' });
    expect(await service.resolveForSend(A, 'receipt')).toEqual({ id: v1.id, version: 1 });
    expect(await service.resolveForSend(A, 'receipt', 2)).toEqual({ id: v1.id, version: 2 });

    const v3 = await service.edit(A, v1.id, { name: 'Receipt (new)', alias: 'receipt-2', variables: [] });
    expect(v3).toMatchObject({ version: 3, name: 'Receipt (new)', alias: 'receipt-2', variables: [] });
    expect(v3.subject).toBe('Your receipt, {{name}}');
    expect((await failure(service.get(A, 'receipt'))).status).toBe(404);

    const published = await service.publish(A, 'receipt-2');
    expect(published).toMatchObject({ version: 3, latestVersion: 3, publishedVersion: 3 });
    expect(await service.resolveForSend(A, 'receipt-2')).toEqual({ id: v1.id, version: 3 });
    expect(await service.publish(A, v1.id, 2)).toMatchObject({ version: 3, publishedVersion: 2 });
    expect(await service.resolveForSend(A, v1.id)).toEqual({ id: v1.id, version: 2 });

    const missing = await failure(service.publish(A, v1.id, 4));
    expect([missing.status, missing.message]).toEqual([404, `version 4 of template ${v1.id} not found`]);
    expect((await failure(service.getVersion(A, v1.id, 4))).status).toBe(404);
    expect((await failure(service.getVersion(A, v1.id, 0))).status).toBe(400);
    expect((await failure(service.publish(A, v1.id, 2 ** 31))).status).toBe(400);
    expect((await service.get(A, v1.id)).publishedVersion).toBe(2);

    // Removing the alias.
    expect(await service.edit(A, v1.id, { alias: null })).toMatchObject({ version: 4, alias: null });
  });

  it('an edit is checked whole, compiled, and refused without storing a version', async () => {
    const t = await service.create(A, input({ html: '', text: 'only text' }));
    const refused = await failure(service.edit(A, t.id, { text: '' }));
    expect([refused.status, refused.message]).toEqual([400, 'html or text is required: give at least one']);

    compileSeen = [];
    compileRefuses = true;
    try {
      const broken = await failure(service.edit(A, t.id, { html: '<p>{{#if}}' }));
      expect([broken.status, broken.message]).toEqual([400, 'html: Parse error on line 1, column 4']);
      expect((await failure(service.create(A, input({ name: 'broken' })))).status).toBe(400);
    } finally {
      compileRefuses = false;
    }
    // The check saw the version that would have been stored: the edit merged into the latest.
    expect(compileSeen[0]).toMatchObject({ html: '<p>{{#if}}', text: 'only text', subject: 'Hello {{name}}' });
    const after = await service.get(A, t.id);
    expect(after.latestVersion).toBe(1);
    expect((await service.list(A, { page: 1, pageSize: 100 })).templates.some((x) => x.name === 'broken')).toBe(false);
  });

  it('the schema refuses a published version past the latest, and a version that is not stored', async () => {
    const t = await service.create(A, input());
    await expect(sql`update templates set published_version = 2 where id = ${t.id}`).rejects.toMatchObject({
      constraint_name: 'templates_published_not_after_latest',
    });
    // Latest 2 without a version 2: the deferred foreign key refuses the commit.
    await expect(
      sql.begin((tx) => tx`update templates set latest_version = 2 where id = ${t.id}`),
    ).rejects.toMatchObject({ constraint_name: 'templates_latest_version_fkey' });
    await expect(
      sql`insert into template_versions (template_id, version, subject) values (${t.id}, 0, 's')`,
    ).rejects.toMatchObject({ constraint_name: 'template_versions_version_check' });
  });
});

describe('templates: aliases, delete, accounts', () => {
  it('an alias taken by a live template of the account is 409, on create and on edit', async () => {
    await service.create(A, input({ alias: 'taken' }));
    const onCreate = await failure(service.create(A, input({ alias: 'taken' })));
    expect([onCreate.status, onCreate.body()]).toEqual([
      409,
      { error: 'conflict', message: 'alias "taken" is already used by another template of this account' },
    ]);
    const other = await service.create(A, input({ alias: 'other' }));
    const onEdit = await failure(service.edit(A, other.id, { alias: 'taken' }));
    expect(onEdit.status).toBe(409);
    // The refused edit stored nothing.
    expect(await service.get(A, other.id)).toEqual(other);
    // Another account may use the same alias.
    expect((await service.create(B, input({ alias: 'taken' }))).alias).toBe('taken');
  });

  it('two creates of one alias at once: one template, one 409', async () => {
    const results = await Promise.allSettled([1, 2, 3].map(() => service.create(A, input({ alias: 'raced' }))));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    for (const r of results.filter((x) => x.status === 'rejected')) expect((r.reason as AppError).status).toBe(409);
  });

  it('an account that does not exist is 404, not a database error', async () => {
    const err = await failure(service.create('acc_missing', input()));
    expect([err.status, err.message]).toEqual([404, 'account acc_missing not found']);
  });

  it('a deleted template is gone for reads, edits, publish and sends, and its alias is free again', async () => {
    const t = await service.create(A, input({ alias: 'short-lived' }));
    await service.delete(A, 'short-lived');
    for (const key of [t.id, 'short-lived']) {
      expect((await failure(service.get(A, key))).status).toBe(404);
      expect((await failure(service.edit(A, key, { subject: 'x' }))).status).toBe(404);
      expect((await failure(service.publish(A, key))).status).toBe(404);
      expect((await failure(service.delete(A, key))).status).toBe(404);
      const send = await failure(service.resolveForSend(A, key));
      expect([send.status, send.message]).toEqual([400, `template.id: no template ${key} (unknown or deleted)`]);
    }
    const again = await service.create(A, input({ alias: 'short-lived' }));
    expect(again.id).not.toBe(t.id);
    expect(await service.get(A, 'short-lived')).toEqual(again);
    // Its versions stay, for the emails rendered from it.
    const [row] = await sql<
      { n: number }[]
    >`select count(*)::int as n from template_versions where template_id = ${t.id}`;
    expect(row!.n).toBe(1);
  });

  it("another account's template is not found, by id or alias, for every operation", async () => {
    const t = await service.create(A, input({ alias: 'private' }));
    for (const key of [t.id, 'private']) {
      expect((await failure(service.get(B, key))).status).toBe(404);
      expect((await failure(service.getVersion(B, key, 1))).status).toBe(404);
      expect((await failure(service.edit(B, key, { subject: 'stolen' }))).status).toBe(404);
      expect((await failure(service.publish(B, key, 1))).status).toBe(404);
      expect((await failure(service.delete(B, key))).status).toBe(404);
      expect((await failure(service.resolveForSend(B, key))).message).toMatch(/^template\.id: /);
    }
    expect(await service.get(A, t.id)).toEqual(t);
    expect((await service.list(B, { page: 1, pageSize: 100 })).templates.some((x) => x.id === t.id)).toBe(false);
  });

  it('resolveForSend names template.version when the template lacks it', async () => {
    const t = await service.create(A, input());
    const err = await failure(service.resolveForSend(A, t.id, 2));
    expect([err.status, err.message]).toEqual([400, `template.version: template ${t.id} has no version 2`]);
    expect((await failure(service.resolveForSend(A, t.id, -1))).message).toBe(
      'template.version must be a whole number from 1, got -1',
    );
    expect((await failure(service.resolveForSend(A, ''))).message).toBe('template.id is required');
  });
});

describe('templates: concurrent edits', () => {
  it('edits at once each get their own version, consecutive, and none loses another', async () => {
    const t = await service.create(A, input({ alias: 'busy' }));
    // Each edit changes a different field: a lost update would show as one of them missing at the end.
    const patches = [
      { name: 'Busy' },
      { subject: 'New subject' },
      { html: '<p>new</p>' },
      { text: 'new text' },
      { variables: [{ name: 'x' }] },
      { localizations: { fr: { subject: 'Bonjour' } } },
    ];
    const edited = await Promise.all(patches.map((p) => service.edit(A, 'busy', p)));
    expect(edited.map((e) => e.version).sort((a, b) => a - b)).toEqual([2, 3, 4, 5, 6, 7]);
    const latest = await service.get(A, t.id);
    expect(latest).toMatchObject({
      version: 7,
      latestVersion: 7,
      publishedVersion: 1,
      name: 'Busy',
      subject: 'New subject',
      html: '<p>new</p>',
      text: 'new text',
      variables: [{ name: 'x', required: true }],
      localizations: { fr: { subject: 'Bonjour' } },
    });

    // Many more at once, with publishes among them: versions 8..27, each stored once.
    const more = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        i % 5 === 4 ? service.publish(A, t.id) : service.edit(A, t.id, { subject: `edit ${i}` }),
      ),
    );
    expect(more.length).toBe(20);
    const rows = await sql<{ version: number }[]>`
      select version from template_versions where template_id = ${t.id} order by version`;
    expect(rows.map((r) => r.version)).toEqual(Array.from({ length: 23 }, (_, i) => i + 1));
    const [row] = await sql<{ latest_version: number; published_version: number }[]>`
      select latest_version, published_version from templates where id = ${t.id}`;
    expect(row!.latest_version).toBe(23);
    expect(row!.published_version).toBeGreaterThan(1);
  });
});
