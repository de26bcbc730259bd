import fs from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ADMIN_TOKEN } from '../helpers/stack.js';
import { useCli } from '../helpers/use-cli.js';

/**
 * `mailer suppressions` as a user runs it: `bin/run.js` in a child process against the real service, with the
 * account's API key; and the operator's `accounts suppressions` / `accounts unsuppress` with the admin token.
 */
const cli = useCli();
const { stack, mailer, json, ok } = cli;

interface Entry {
  email: string;
  reason: string;
  scope: string;
  topic: string | null;
  created_at: string;
}

describe('suppressions', () => {
  it('--help lists the commands', async () => {
    const topic = await ok(['suppressions', '--help']);
    for (const c of ['list', 'add', 'delete', 'import', 'export']) expect(topic.stdout).toContain(`suppressions ${c}`);
  });

  it('add, list, import a file (bad rows by line), export it again, delete; an API refusal exits 1', async () => {
    const added = await json<Entry>([
      'suppressions',
      'add',
      'CLI.User@Example.org',
      '--scope',
      'broadcast',
      '--topic',
      'news',
    ]);
    expect(added).toEqual({
      email: 'cli.user@example.org',
      reason: 'manual',
      scope: 'broadcast',
      topic: 'news',
      created_at: expect.any(String),
    });
    const shown = await ok(['suppressions', 'add', 'cli.plain@example.org']);
    expect(shown.stdout).toContain('Suppressed cli.plain@example.org: all mail (manual');

    await fs.writeFile(
      path.join(cli.workDir, 'list.csv'),
      'email,scope,topic\r\ncli.one@example.org,,\r\nnot an address,,\r\ncli.two@example.org,broadcast,\r\n',
    );
    const imported = await ok(['suppressions', 'import', 'list.csv']);
    expect(imported.stdout).toContain('Imported 2, skipped 0 already suppressed, 1 rows refused');
    expect(imported.stdout).toContain('line 3: email is not a valid email address');

    const listed = await json<{ suppressions: Entry[]; total: number }>(['suppressions', 'list', '--email', 'cli.']);
    expect(listed.total).toBe(4);
    const table = await ok(['suppressions', 'list', '--scope', 'broadcast', '--email', 'cli.']);
    expect(table.stdout).toMatch(/EMAIL\s+REASON\s+SCOPE\s+TOPIC\s+SINCE/);
    expect(table.stdout).toMatch(/cli\.user@example\.org\s+manual\s+broadcast\s+news/);
    expect(table.stdout).not.toContain('cli.one@example.org');

    const exported = await ok(['suppressions', 'export']);
    expect(exported.stdout.split('\r\n')[0]).toBe('email,reason,scope,topic,created_at');
    expect(exported.stdout).toMatch(/^cli\.two@example\.org,manual,broadcast,,/m);
    const toFile = await ok(['suppressions', 'export', '-o', 'out.csv']);
    expect(toFile.stderr).toMatch(/\d+ suppressions written to out\.csv/);
    expect(await fs.readFile(path.join(cli.workDir, 'out.csv'), 'utf8')).toBe(exported.stdout);

    const removed = await ok([
      'suppressions',
      'delete',
      'cli.user@example.org',
      '--scope',
      'broadcast',
      '--topic',
      'news',
    ]);
    expect(removed.stdout).toContain('1 suppression of cli.user@example.org removed');
    const again = await mailer(['suppressions', 'delete', 'cli.user@example.org']);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/not found/);
    const bad = await mailer(['suppressions', 'add', 'x@example.org', '--topic', 'news']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('topic is only allowed with scope "broadcast"');
    expect((await mailer(['suppressions', 'import', 'missing.csv'])).code).toBe(2);
  });

  it("operators list an account's suppressions with ids and remove one by id", async () => {
    await json(['suppressions', 'add', 'cli.operator@example.org']);
    const listed = await json<{ suppressions: { id: string; email_address: string; scope: string; topic: null }[] }>(
      ['accounts', 'suppressions', '-a', stack.accountId],
      { MAILER_ADMIN_TOKEN: ADMIN_TOKEN },
    );
    const one = listed.suppressions.find((s) => s.email_address === 'cli.operator@example.org');
    expect(one).toMatchObject({ scope: 'all', topic: null });
    expect(await json(['accounts', 'unsuppress', one!.id])).toMatchObject({ success: true });
    expect((await ok(['accounts', 'suppressions', '-a', stack.accountId])).stdout).not.toContain('cli.operator@');
  });
});
