import { spawn } from 'node:child_process';
import postgres from 'postgres';
import { describe, expect, it } from 'vitest';
import { eventually } from '../helpers/http.js';
import { stackEnv } from '../helpers/stack.js';
import { BIN, useCli } from '../helpers/use-cli.js';
import { startWebhookReceiver } from '../helpers/webhook-receiver.js';

/**
 * The operator CLI as a user runs it: `bin/run.js` in a child process, against the real service (its
 * Connect API over HTTP/2, PostgreSQL, Temporal, a receiving SMTP server), configured through
 * MAILER_URL, MAILER_API_KEY and MAILER_ADMIN_TOKEN.
 */

const cli = useCli();
const { stack, mailer, json, ok } = cli;

describe('management', () => {
  it('keys create shows the key once; keys list never does; a deleted key stops working', async () => {
    const created = await ok([
      'keys',
      'create',
      '--account',
      stack.accountId,
      '--name',
      'ci',
      '--permission',
      'send_only',
      '--allowed-domain',
      'example.com',
    ]);
    const key = /^\s+(mk_\S+)$/m.exec(created.stdout)?.[1];
    expect(key, created.stdout).toBeDefined();
    expect(created.stdout).toContain('shown once');
    const id = /^id\s+(key_\w+)$/m.exec(created.stdout)?.[1];

    const listed = await ok(['keys', 'list', '--account', stack.accountId]);
    expect(listed.stdout).toContain(id);
    expect(listed.stdout).not.toContain(key);
    expect(listed.stdout).not.toContain('mk_');
    const listedJson = await json<{ api_keys: Record<string, unknown>[] }>(['keys', 'list', '-a', stack.accountId]);
    const row = listedJson.api_keys.find((k) => k.id === id)!;
    expect(row).toMatchObject({
      name: 'ci',
      permission: 'send_only',
      allowed_domains: ['example.com'],
      usage: expect.any(Object),
    });
    expect(row).not.toHaveProperty('key');
    expect(JSON.stringify(listedJson)).not.toContain(key);

    await ok(['emails', 'list'], { MAILER_API_KEY: key });
    await ok(['keys', 'delete', id!]);
    const after = await mailer(['emails', 'list'], { MAILER_API_KEY: key });
    expect(after.code).toBe(1);
    expect(after.stderr).toMatch(/^unauthorized: /);
  });

  it('accounts and domains', async () => {
    const account = await json<{ id: string; status: string; daily_quota: number }>(['accounts', 'create', 'CLI Corp']);
    expect(account).toMatchObject({ id: expect.stringMatching(/^acc_/), status: 'healthy', daily_quota: 100 });
    expect((await ok(['accounts', 'list'])).stdout).toContain(account.id);

    const domain = await json<{ id: string; verified: boolean; dns_records: unknown[] }>([
      'domains',
      'add',
      'cli.example.org',
      '--account',
      account.id,
    ]);
    expect(domain.verified).toBe(false);
    expect(domain.dns_records.length).toBeGreaterThan(0);
    const verified = await ok(['domains', 'verify', domain.id, '--force']);
    expect(verified.stdout).toMatch(/^verified\s+yes$/m);
    // Each record with its purpose and status; the DKIM record is the key's (a forced verify checks no DNS).
    expect(verified.stdout).toMatch(/^PURPOSE\s+STATUS\s+TYPE\s+NAME\s+VALUE$/m);
    expect(verified.stdout).toMatch(
      /^dkim\s+pending\s+TXT\s+m\d{8}\._domainkey\.cli\.example\.org\s+v=DKIM1; k=rsa; p=\S+$/m,
    );
    // The DKIM value, over 255 characters, also as a zone file line of quoted 255-character strings.
    const [, dkimName, dkimValue] = /^dkim\s+pending\s+TXT\s+(\S+)\s+(v=DKIM1; k=rsa; p=\S+)$/m.exec(verified.stdout)!;
    expect(dkimValue!.length).toBeGreaterThan(255);
    expect(verified.stdout).toContain('TXT values over 255 characters, as quoted 255-character strings');
    expect(verified.stdout.split('\n')).toContain(
      `${dkimName}. IN TXT "${dkimValue!.slice(0, 255)}" "${dkimValue!.slice(255)}"`,
    );
    const rotated = await ok(['domains', 'rotate-dkim', domain.id]);
    expect(rotated.stdout).toMatch(/^dkim\s+pending\s+TXT\s+m\d{8}-2\._domainkey\.cli\.example\.org\s/m);
    const twice = await mailer(['domains', 'rotate-dkim', domain.id]);
    expect(twice.code).toBe(1);
    expect(twice.stderr).toMatch(/^conflict: .*already has a new DKIM key/);
    expect(await json(['domains', 'tracking', domain.id, '--open', '--no-click'])).toMatchObject({
      open_tracking: true,
      click_tracking: false,
    });
    expect((await ok(['domains', 'list', '-a', account.id])).stdout).toMatch(/cli\.example\.org\s+yes\s+yes\s+no/);
    expect(await json(['accounts', 'get', account.id])).toMatchObject({ daily_quota: 1000, sent_today: 0 });
    expect(await json(['accounts', 'update', account.id, '--status', 'paused'])).toMatchObject({ status: 'paused' });
    expect((await mailer(['accounts', 'update', account.id])).code).toBe(2);
    const branded = await ok(['accounts', 'update', account.id, '--brand-name', 'Acme News']);
    expect(branded.stdout).toMatch(/^brand_name\s+Acme News$/m);
    expect(
      await json(['accounts', 'update', account.id, '--brand-logo-url', 'https://cdn.acme.example/logo.png']),
    ).toMatchObject({ brand_name: 'Acme News', brand_logo_url: 'https://cdn.acme.example/logo.png' });
    const refused = await mailer([
      'accounts',
      'update',
      account.id,
      '--brand-logo-url',
      'http://cdn.acme.example/l.png',
    ]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/brand_logo_url/);
  });

  it('webhooks create shows the secret once; list never does; delete', async () => {
    const account = await json<{ id: string }>(['accounts', 'create', 'Hooks Corp']);
    const hook = await ok([
      'webhooks',
      'create',
      'http://127.0.0.1:9/hook',
      '--account',
      account.id,
      '--event',
      'delivery',
      '--event',
      'bounce',
    ]);
    const secret = /^\s+(\S+)$/m.exec(hook.stdout.split('Signing secret')[1] ?? '')?.[1];
    expect(secret).toBeDefined();
    const hookId = /^id\s+(wh_\w+)$/m.exec(hook.stdout)?.[1];
    const hooks = await json<{ webhooks: Record<string, unknown>[] }>(['webhooks', 'list', '-a', account.id]);
    expect(hooks.webhooks).toEqual([
      { id: hookId, url: 'http://127.0.0.1:9/hook', events: ['delivery', 'bounce'], created_at: expect.any(String) },
    ]);
    expect(JSON.stringify(hooks)).not.toContain(secret);
    expect(await json(['webhooks', 'delete', hookId!])).toMatchObject({ success: true });
    expect(await json(['webhooks', 'list', '-a', account.id])).toEqual({ webhooks: [], total: 0 });

    const wrongToken = await mailer(['accounts', 'list'], { MAILER_ADMIN_TOKEN: 'nope' });
    expect(wrongToken.code).toBe(1);
    expect(wrongToken.stderr).toMatch(/^unauthorized: /);
  });
});

describe('management', () => {
  it('webhooks verify, deliveries and resend; emails events; accounts suppressions and unsuppress', async () => {
    const receiver = await startWebhookReceiver();
    try {
      let failing = true;
      receiver.respond = () => ({ status: failing ? 500 : 200 });
      const hook = await json<{ id: string }>([
        'webhooks',
        'create',
        `${receiver.url}/cli`,
        '-a',
        stack.accountId,
        '--event',
        'bounce',
      ]);
      const verify = await mailer(['webhooks', 'verify', hook.id]);
      expect(verify.code).toBe(1);
      expect(verify.stdout).toContain('Failed: HTTP 500');
      failing = false;
      expect(await json(['webhooks', 'verify', hook.id])).toEqual({ success: true, status_code: 200 });

      stack.sink.refuseRecipient = (a) => (a.startsWith('gone') ? '550 5.1.1 <gone>: no such user' : undefined);
      failing = true;
      const sent = await json<{ id: string }>([
        'emails',
        'send',
        '--from',
        'sender@example.com',
        '--to',
        'gone@example.net',
        '--subject',
        'cli bounce',
        '--text',
        'x',
      ]);
      const discarded = await eventually(
        async () => {
          const r = await json<{ deliveries: { id: string; status: string; attempts: unknown[] }[] }>([
            'webhooks',
            'deliveries',
            hook.id,
            '--status',
            'discarded',
          ]);
          return r.deliveries[0];
        },
        30_000,
        500,
      );
      expect(discarded.attempts).toHaveLength(4);
      expect((await ok(['webhooks', 'deliveries', hook.id])).stdout).toMatch(
        /bounce\s+em_\w+\s+discarded\s+500 → 500 → 500 → 500/,
      );
      failing = false;
      expect(await json(['webhooks', 'resend', discarded.id])).toMatchObject({ id: discarded.id, status: 'pending' });
      await eventually(
        async () => receiver.on('/cli').filter((h) => h.body.event === 'bounce').length === 5,
        20_000,
        100,
      );

      const timeline = await ok(['emails', 'events', sent.id]);
      expect(timeline.stdout).toMatch(/\ssend\s/);
      expect(timeline.stdout).toMatch(/\sbounce\s+\{"bounce_type":"Permanent"/);
      const supp = await json<{ suppressions: { id: string; email_address: string }[] }>([
        'accounts',
        'suppressions',
        '-a',
        stack.accountId,
      ]);
      const gone = supp.suppressions.find((x) => x.email_address === 'gone@example.net');
      expect(gone).toBeDefined();
      expect(await json(['accounts', 'unsuppress', gone!.id])).toMatchObject({ success: true });
      expect((await ok(['accounts', 'suppressions', '-a', stack.accountId])).stdout).not.toContain('gone@example.net');
    } finally {
      stack.sink.refuseRecipient = () => undefined;
      await receiver.close();
    }
  });
});

describe('server', () => {
  it('migrate finds the database up to date', async () => {
    const r = await json<{ applied: number[]; version: number }>(['server', 'migrate'], {
      DATABASE_URL: stack.databaseUrl,
    });
    expect(r.applied).toEqual([]);
    expect(r.version).toBeGreaterThanOrEqual(2);
  });

  it('start --role api serves the API until SIGINT', async () => {
    const env = {
      ...stackEnv(stack.databaseUrl, stack.sink.url, stack.taskQueue, stack.dataDir),
      MAILER_ROLE: 'worker',
    };
    const child = spawn(process.execPath, [BIN, 'server', 'start', '--role', 'api'], {
      cwd: cli.workDir,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    try {
      const grpc = await eventually(async () => /gRPC\s+(\S+)/.exec(stdout)?.[1], 40_000, 100).catch((err: Error) => {
        throw new Error(`${err.message}\nstdout: ${stdout}\nstderr: ${stderr}`);
      });
      expect(stdout).toContain('mailer is running (role: api)');
      const listed = await json<{ total: number }>(['emails', 'list'], { MAILER_URL: `http://${grpc}` });
      expect(listed.total).toBeGreaterThan(0);
    } finally {
      child.kill('SIGINT');
    }
    expect(await exited).toBe(0);
  });
});

describe('management', () => {
  it('webhooks rotate-secret shows the new secret once; a disabled webhook shows so, enable and resend-range', async () => {
    const hook = await json<{ id: string; secret: string }>([
      'webhooks',
      'create',
      'http://127.0.0.1:9/rotating',
      '-a',
      stack.accountId,
      '--event',
      'open',
    ]);
    const rotated = await ok(['webhooks', 'rotate-secret', hook.id, '--overlap', '600']);
    const fresh = /^\s+(whsec_\S+)$/m.exec(rotated.stdout)?.[1];
    expect(fresh, rotated.stdout).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(fresh).not.toBe(hook.secret);
    expect(rotated.stdout).toMatch(/^previous_secret_until\s+\S+ \(the previous secret signs too until then\)$/m);
    const again = await json<{ secret: string; previous_secret_until: string }>([
      'webhooks',
      'rotate-secret',
      hook.id,
      '--overlap',
      '0',
    ]);
    expect(again.secret).not.toBe(fresh);
    expect(again).not.toHaveProperty('previous_secret_until');
    expect((await mailer(['webhooks', 'rotate-secret', hook.id, '--overlap', '-1'])).code).toBe(2);

    // Disabled as the threshold would (the threshold itself: test/integration/webhook-trust.test.ts).
    const sql = postgres(stack.databaseUrl, { max: 1, onnotice: () => {} });
    try {
      await sql`update webhooks set disabled_at = now(), disabled_reason = '10 deliveries in a row discarded' where id = ${hook.id}`;
    } finally {
      await sql.end();
    }
    const listed = await ok(['webhooks', 'list', '-a', stack.accountId]);
    expect(listed.stdout).toMatch(new RegExp(`${hook.id}\\s.*\\sdisabled since \\S+`));
    const refused = await mailer(['webhooks', 'resend-range', hook.id, '--from', '2020-01-01T00:00:00Z']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/is disabled \(10 deliveries in a row discarded\); enable it first/);
    const enabled = await ok(['webhooks', 'enable', hook.id]);
    expect(enabled.stdout).toMatch(/^Enabled\nid\s+wh_/);
    expect(enabled.stdout).not.toContain('disabled');
    expect((await ok(['webhooks', 'list', '-a', stack.accountId])).stdout).toMatch(
      new RegExp(`${hook.id}\\s.*\\sactive\\s`),
    );
    expect(await json(['webhooks', 'resend-range', hook.id, '--from', '2020-01-01T00:00:00Z'])).toEqual({
      queued: 0,
      has_more: false,
    });
    expect((await ok(['webhooks', 'resend-range', hook.id, '--from', '2020-01-01T00:00:00Z'])).stdout).toBe(
      `Queued 0 discarded deliveries of ${hook.id} again\n`,
    );
  });
});
