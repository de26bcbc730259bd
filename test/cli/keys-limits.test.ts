import { describe, expect, it } from 'vitest';
import { useCli } from '../helpers/use-cli.js';

/** `mailer keys create` with a key's own limits, and `mailer keys list` showing them, against the real service. */
const { stack, mailer, json, ok } = useCli();

describe('keys with limits', () => {
  it('keys create takes --rate-limit, --daily-quota and --expires-at; keys list shows them with the usage', async () => {
    const expiresAt = new Date(Date.now() + 86_400_000).toISOString();
    const created = await ok([
      'keys',
      'create',
      '-a',
      stack.accountId,
      '--name',
      'limited',
      '--permission',
      'send_only',
      '--rate-limit',
      '5',
      '--daily-quota',
      '40',
      '--expires-at',
      expiresAt,
    ]);
    expect(created.stdout).toMatch(/^rate_limit\s+5 requests per second$/m);
    expect(created.stdout).toMatch(/^daily_quota\s+40 emails per UTC day$/m);
    expect(created.stdout).toMatch(new RegExp(`^expires_at\\s+${expiresAt.replace(/\./g, '\\.')}$`, 'm'));
    const id = /^id\s+(key_\w+)$/m.exec(created.stdout)![1]!;
    const key = /^\s+(mk_\S+)$/m.exec(created.stdout)![1]!;

    // One email with the key: its count against its own quota shows as sent today.
    await ok(['emails', 'send', '-f', 'a@example.com', '-t', 'b@example.net', '-s', 'hi', '--text', 'hi'], {
      MAILER_API_KEY: key,
    });

    const listed = await ok(['keys', 'list', '-a', stack.accountId]);
    const header = listed.stdout.split('\n')[0]!;
    expect(header).toMatch(/RATE\/S\s+DAILY QUOTA\s+SENT TODAY\s+EXPIRES\s+REQUESTS\s+SENT\s+ERRORS\s+LAST USED/);
    const row = listed.stdout.split('\n').find((l) => l.startsWith(id))!;
    expect(row).toMatch(
      new RegExp(`\\b5\\s+40\\s+1\\s+${expiresAt.replace(/\./g, '\\.')}\\s+1\\s+1\\s+0\\.00%\\s+\\d{4}-`),
    );
    // The default key has no limits of its own.
    const own = listed.stdout.split('\n').find((l) => l.includes('(service)'));
    expect(own).toMatch(/\(service\)\s+\(account\)\s+-\s+never/);
    expect(listed.stdout).toMatch(/^page 1 of 1 \(\d+ in all\)$/m);

    const asJson = await json<{ api_keys: Record<string, unknown>[]; total: number }>([
      'keys',
      'list',
      '-a',
      stack.accountId,
    ]);
    expect(asJson.api_keys.find((k) => k.id === id)).toMatchObject({
      rate_limit: 5,
      daily_quota: 40,
      expires_at: expiresAt,
      usage: { sent_today: 1, email_sent_count: 1 },
    });

    const refused = await mailer([
      'keys',
      'create',
      '-a',
      stack.accountId,
      '--name',
      'x',
      '--permission',
      'all',
      '--expires-at',
      '2020-01-01T00:00:00Z',
    ]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/expires_at: 2020-01-01T00:00:00\.000Z is not in the future/);
  });
});
