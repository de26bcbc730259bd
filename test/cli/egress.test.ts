import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import postgres from 'postgres';
import { afterAll, describe, expect, it } from 'vitest';
import { admin } from '../helpers/admin-fixtures.js';
import { EGRESS_HELD_UNTIL, seedEgressState } from '../helpers/egress-rows.js';
import { useCli } from '../helpers/use-cli.js';

/**
 * `mailer egress status|resume` as an operator runs them: `bin/run.js` in a child process against the real service
 * with the admin token, over a rules file of its own and state rows written as the workers write them.
 */
let dir = '';
const cli = useCli(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'egress-cli-'));
  const rules = path.join(dir, 'egress-rules.toml');
  await fs.writeFile(
    rules,
    [
      '[default]',
      'rate = "600/min"',
      '[site.google]',
      'mx = ["*.google.com"]',
      'connection_limit = 5',
      'rate = "1000/min"',
      '[pool.bulk]',
      'streams = ["broadcast"]',
      '[[pool.bulk.source]]',
      'address = "127.0.0.3"',
      'ehlo = "mta3.example.com"',
      `warmup = { start = "${new Date().toISOString().slice(0, 10)}", daily = [50] }`,
    ].join('\n'),
  );
  return { MAILER_EGRESS_RULES: rules };
});
const { stack, mailer, json, ok } = cli;
let db: postgres.Sql | undefined;
afterAll(async () => {
  await db?.end();
  if (dir) await fs.rm(dir, { recursive: true, force: true });
});

async function seed(): Promise<void> {
  db ??= postgres(stack.databaseUrl, { max: 1, onnotice: () => {} });
  await seedEgressState(db);
}

describe('egress', () => {
  it('--help lists the commands, with examples', async () => {
    const topic = await ok(['egress', '--help']);
    for (const c of ['egress status', 'egress resume']) expect(topic.stdout).toContain(c);
    expect((await ok(['egress', 'resume', '--help'])).stdout).toContain('EXAMPLES');
  });

  it('status: a table of the sites and pools; --json as the management API answers', async () => {
    await seed();
    const shown = await ok(['egress', 'status']);
    const lines = shown.stdout.split('\n');
    expect(lines[0]).toMatch(/^Rules: .*egress-rules\.toml$/);
    expect(shown.stdout).toMatch(/SITE\s+STATE\s+UNTIL\s+RATE\s+CONNECTIONS\s+ATTEMPTS\/MIN\s+LAST REPLY/);
    expect(lines.find((l) => l.startsWith('google'))?.split(/\s{2,}/)).toEqual([
      'google',
      'suspended',
      EGRESS_HELD_UNTIL.toISOString(),
      '1000/min',
      '1/5',
      '9',
      '421 4.7.28 unusual rate of unsolicited mail [suspend]',
    ]);
    expect(lines.find((l) => l.startsWith('outlook.com'))?.split(/\s{2,}/)).toEqual([
      'outlook.com',
      'throttled',
      EGRESS_HELD_UNTIL.toISOString(),
      '60/min (of 600/min)',
      '0/3',
      '0',
    ]);
    expect(shown.stdout).toMatch(/POOL\s+ADDRESS\s+EHLO\s+FOR\s+WARM-UP TODAY/);
    expect(shown.stdout).toMatch(/bulk\s+127\.0\.0\.3\s+mta3\.example\.com\s+broadcast\s+7\/50/);

    const asJson = await json(['egress', 'status']);
    expect(asJson).toEqual((await admin(stack, 'GET', '/egress')).body);
  });

  it('resume: lifts a site, --json the site; an unknown site exits 1 with the API error', async () => {
    await seed();
    const resumed = await ok(['egress', 'resume', 'google']);
    expect(resumed.stdout).toMatch(/^Resumed google\n/);
    expect(resumed.stdout.split('\n').find((l) => l.startsWith('google'))).toMatch(/^google\s+ok\s+1000\/min/);
    const site = await json<{ site: string; throttled_until: string; current_rate: string }>([
      'egress',
      'resume',
      'outlook.com',
    ]);
    expect(site).toMatchObject({ site: 'outlook.com', throttled_until: '', current_rate: '600/min' });
    const status = await ok(['egress', 'status']);
    expect(status.stdout).not.toMatch(/suspended|throttled/);

    const unknown = await mailer(['egress', 'resume', 'nowhere.example']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/^not found: egress site nowhere\.example not found/);
    const junk = await mailer(['egress', 'resume', 'a b']);
    expect(junk.code).toBe(1);
    expect(junk.stderr).toMatch(/^validation error: site must be/);
    const usage = await mailer(['egress', 'resume']);
    expect(usage.code).toBe(2);
  });
});
