import { describe, expect, it } from 'vitest';
import { addDomain, createAccount } from '../helpers/admin-fixtures.js';
import { useCli } from '../helpers/use-cli.js';

/**
 * `mailer inbound routes` as a user runs it: `bin/run.js` in a child process against the real service, with the
 * account's API key (its seeded domain example.com is verified), and as the operator with --account / --admin and
 * the admin token.
 */
const cli = useCli();
const { stack, mailer, json, ok } = cli;

interface Route {
  id: string;
  match: string;
  created_at: string;
}

describe('inbound routes', () => {
  it('--help lists the commands', async () => {
    const topic = await ok(['inbound', 'routes', '--help']);
    for (const c of ['create', 'list', 'delete']) expect(topic.stdout).toContain(`inbound routes ${c}`);
  });

  it('create (key form), list, delete with the API key; an API refusal exits 1 with its message', async () => {
    const made = await json<Route>(['inbound', 'routes', 'create', 'CLI.Desk@Example.COM']);
    expect(made).toEqual({
      id: expect.stringMatching(/^rt_/),
      match: 'cli.desk@example.com',
      created_at: expect.any(String),
    });
    const shown = await ok(['inbound', 'routes', 'create', '*@in.example.com']);
    expect(shown.stdout).toMatch(/ID\s+MATCH\s+CREATED/);
    expect(shown.stdout).toMatch(/rt_\S+\s+\*@in\.example\.com/);

    const listed = await json<{ routes: Route[]; total: number }>(['inbound', 'routes', 'list']);
    expect(listed.total).toBe(2);
    expect(listed.routes.map((r) => r.match)).toEqual(['*@in.example.com', 'cli.desk@example.com']);
    const table = await ok(['inbound', 'routes', 'list', '--page-size', '1', '--page', '2']);
    expect(table.stdout).toContain('cli.desk@example.com');
    expect(table.stdout).not.toContain('*@in.example.com');

    const taken = await mailer(['inbound', 'routes', 'create', 'cli.desk@example.com']);
    expect(taken.code).toBe(1);
    expect(taken.stderr).toContain('match: cli.desk@example.com is already routed');
    const bad = await mailer(['inbound', 'routes', 'create', 'desk+tag@example.com']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/match: .*no "\+"/);

    const gone = await ok(['inbound', 'routes', 'delete', made.id]);
    expect(gone.stdout).toContain(`inbound route ${made.id} deleted`);
    const again = await mailer(['inbound', 'routes', 'delete', made.id]);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/not found/);
    expect((await mailer(['inbound', 'routes', 'create'])).code).toBe(2);
  });

  it("operators add and list an account's routes with --account, and delete any with --admin", async () => {
    const accountId = await createAccount(stack, 'cli routes');
    await addDomain(stack, accountId, 'cli-routes.test');
    const made = await json<Route>(['inbound', 'routes', 'create', 'ops@cli-routes.test', '--account', accountId]);
    expect(made.match).toBe('ops@cli-routes.test');
    const listed = await json<{ routes: Route[]; total: number }>(['inbound', 'routes', 'list', '-a', accountId]);
    expect(listed).toEqual({ routes: [made], total: 1 });
    // Not the API key's account: its own list does not have it, and its key cannot delete it.
    expect((await json<{ routes: Route[] }>(['inbound', 'routes', 'list'])).routes.map((r) => r.id)).not.toContain(
      made.id,
    );
    expect((await mailer(['inbound', 'routes', 'delete', made.id])).code).toBe(1);
    expect(await json(['inbound', 'routes', 'delete', made.id, '--admin'])).toEqual({
      success: true,
      message: `inbound route ${made.id} deleted`,
    });
    const noToken = await mailer(['inbound', 'routes', 'list', '-a', accountId], { MAILER_ADMIN_TOKEN: '' });
    expect(noToken.code).toBe(2);
    expect(noToken.stderr).toContain('no admin token');
  });
});
