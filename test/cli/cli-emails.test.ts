import fs from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { eventually } from '../helpers/http.js';
import { useCli } from '../helpers/use-cli.js';

/**
 * The operator CLI as a user runs it: `bin/run.js` in a child process, against the real service (its
 * Connect API over HTTP/2, PostgreSQL, Temporal, a receiving SMTP server), configured through
 * MAILER_URL, MAILER_API_KEY and MAILER_ADMIN_TOKEN.
 */

const cli = useCli();
const { stack, mailer, json, ok } = cli;

describe('help and usage', () => {
  it('--help lists the topics, and every command has examples', async () => {
    const root = await ok(['--help']);
    for (const topic of [
      'emails',
      'scheduled',
      'batches',
      'accounts',
      'domains',
      'keys',
      'webhooks',
      'suppressions',
      'events',
      'server',
    ])
      expect(root.stdout).toMatch(new RegExp(`^\\s+${topic}\\s`, 'm'));
    const send = await ok(['emails', 'send', '--help']);
    expect(send.stdout).toContain('EXAMPLES');
    expect(send.stdout).toContain('--html-file');
    expect(send.stdout).toContain('--attach');
    expect(send.stdout).toContain('MAILER_API_KEY');
    const topic = await ok(['batches', '--help']);
    for (const c of ['batches send', 'batches list', 'batches get', 'batches watch']) expect(topic.stdout).toContain(c);
  });

  it('exits 2 on usage errors', async () => {
    const missing = await mailer(['emails', 'send', '--to', 'a@example.net', '--subject', 'x', '--text', 'x']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/Missing required flag.*from/s);
    expect((await mailer(['emails', 'list', '--page-size', '500'])).code).toBe(2);
    expect((await mailer(['emails', 'list', '--status', 'lost'])).code).toBe(2);
    expect((await mailer(['emails', 'nonsense'])).code).toBe(2);
    const noTime = await mailer([
      'scheduled',
      'create',
      '-f',
      'hello@example.com',
      '-t',
      'a@example.net',
      '-s',
      'x',
      '--text',
      'x',
    ]);
    expect(noTime.code).toBe(2);
    const badIn = await mailer([
      'scheduled',
      'create',
      '--in',
      'soon',
      '-f',
      'hello@example.com',
      '-t',
      'a@example.net',
      '-s',
      'x',
      '--text',
      'x',
    ]);
    expect(badIn.code).toBe(2);
    expect(badIn.stderr).toContain('--in must be a duration');
    const noKey = await mailer(['emails', 'list'], { MAILER_API_KEY: '' });
    expect(noKey.code).toBe(2);
    expect(noKey.stderr).toContain('MAILER_API_KEY');
    const noFile = await mailer([
      'emails',
      'send',
      '-f',
      'hello@example.com',
      '-t',
      'a@example.net',
      '-s',
      'x',
      '--html-file',
      'missing.html',
    ]);
    expect(noFile.code).toBe(2);
    expect(noFile.stderr).toContain('missing.html');
  });
});

describe('emails', () => {
  it('send with --html-file and --attach arrives at the SMTP server; --json answers the typed result; get and list show it', async () => {
    await fs.writeFile(path.join(cli.workDir, 'body.html'), '<h1>Hello from the CLI</h1>');
    await fs.writeFile(path.join(cli.workDir, 'report.csv'), 'a,b\n1,2\n');
    await fs.writeFile(path.join(cli.workDir, 'blob.bin'), Buffer.from([0, 1, 2, 3, 254, 255]));
    const before = stack.sink.messages.length;
    const sent = await json<{ id: string; message_id: string; status: string }>([
      'emails',
      'send',
      '--from',
      'CLI <cli@example.com>',
      '--to',
      'first@example.net',
      '--to',
      'second@example.net',
      '--cc',
      'copy@example.net',
      '--reply-to',
      'replies@example.com',
      '--subject',
      'From the CLI',
      '--html-file',
      'body.html',
      '--text',
      'Hello from the CLI',
      '--attach',
      'report.csv',
      '--attach',
      'blob.bin;type=application/x-test',
      '--header',
      'X-Campaign: cli-test',
      '--tag',
      'source=cli',
    ]);
    expect(sent).toEqual({ id: expect.stringMatching(/^em_/), message_id: '', status: 'pending' });

    // A copy per recipient (three), the same message under envelopes of their own.
    const copies = (await stack.sink.waitFor(before + 3)).slice(before);
    const msg = copies[0];
    const parsed = msg!.parsed;
    expect(parsed.subject).toBe('From the CLI');
    expect(parsed.html).toContain('<h1>Hello from the CLI</h1>');
    expect(parsed.text?.trim()).toBe('Hello from the CLI');
    expect(parsed.headers.get('x-campaign')).toBe('cli-test');
    expect(copies.flatMap((m) => m.envelopeTo).sort()).toEqual([
      'copy@example.net',
      'first@example.net',
      'second@example.net',
    ]);
    const attachments = parsed.attachments.map((a) => ({
      filename: a.filename,
      type: a.contentType,
      content: a.content.toString('base64'),
    }));
    expect(attachments).toEqual([
      { filename: 'report.csv', type: 'text/csv', content: Buffer.from('a,b\n1,2\n').toString('base64') },
      {
        filename: 'blob.bin',
        type: 'application/x-test',
        content: Buffer.from([0, 1, 2, 3, 254, 255]).toString('base64'),
      },
    ]);

    const email = await eventually(
      async () => {
        const e = await json<Record<string, unknown>>(['emails', 'get', sent.id]);
        return e.status === 'delivered' ? e : undefined;
      },
      20_000,
      200,
    );
    expect(email).toMatchObject({
      id: sent.id,
      from: 'CLI <cli@example.com>',
      to: ['first@example.net', 'second@example.net'],
      cc: ['copy@example.net'],
      reply_to: ['replies@example.com'],
      subject: 'From the CLI',
      tags: { source: 'cli' },
      headers: { 'X-Campaign': 'cli-test' },
      job_type: 'direct',
      job_id: '',
      mal_status: 'healthy',
    });
    expect(email.message_id).toMatch(/^<em_.+@example\.com>$/);
    expect((email.attachments as { filename: string }[]).map((a) => a.filename)).toEqual(['report.csv', 'blob.bin']);

    const human = await ok(['emails', 'get', sent.id]);
    expect(human.stdout).toMatch(new RegExp(`^id\\s+${sent.id}$`, 'm'));
    expect(human.stdout).toMatch(/^status\s+delivered$/m);
    expect(human.stdout).toMatch(/^report\.csv\s+text\/csv\s+8 bytes$/m);

    const listed = await json<{ data: { id: string }[]; total: number }>([
      'emails',
      'list',
      '--job-type',
      'direct',
      '--page-size',
      '5',
    ]);
    expect(listed.data.map((e) => e.id)).toContain(sent.id);
    expect(listed.total).toBeGreaterThanOrEqual(1);
    const table = await ok(['emails', 'list', '--status', 'delivered']);
    expect(table.stdout).toMatch(/^ID\s+STATUS\s+FROM\s+TO\s+SUBJECT\s+CREATED$/m);
    expect(table.stdout).toContain(sent.id);
    expect(table.stdout).toMatch(/page 1 of \d+ \(\d+ in all\)/);
    const none = await json<{ data: unknown[]; total: number }>(['emails', 'list', '--status', 'bounced']);
    expect(none).toEqual({ data: [], total: 0 });
  });
});

describe('emails', () => {
  it("an API error exits 1 with the spec's `error: message` on stderr", async () => {
    const key = await json<{ key: string }>([
      'keys',
      'create',
      '--account',
      stack.accountId,
      '--name',
      'reader',
      '--permission',
      'read_only',
    ]);
    const denied = await mailer(
      ['emails', 'send', '-f', 'hello@example.com', '-t', 'a@example.net', '-s', 'x', '--text', 'x', '--json'],
      { MAILER_API_KEY: key.key },
    );
    expect(denied.code).toBe(1);
    expect(denied.stdout).toBe('');
    expect(denied.stderr.trim()).toMatch(/^permission denied: .+/);
    expect(denied.stderr.trim().split('\n')).toHaveLength(1);

    const unauthorized = await mailer(['emails', 'list'], { MAILER_API_KEY: 'mk_wrong' });
    expect(unauthorized.code).toBe(1);
    expect(unauthorized.stderr.trim()).toBe('unauthorized: Invalid or missing API key');

    const notFound = await mailer(['emails', 'get', 'em_00000000000000000000000000']);
    expect(notFound.code).toBe(1);
    expect(notFound.stderr.trim()).toMatch(/^not found: .*em_00000000000000000000000000/);

    const invalid = await mailer(['emails', 'send', '-f', 'hello@example.com', '-t', 'a@example.net', '-s', 'no body']);
    expect(invalid.code).toBe(1);
    expect(invalid.stderr.trim()).toMatch(/^validation error: /);

    const down = await mailer(['emails', 'list'], { MAILER_URL: 'http://127.0.0.1:9' });
    expect(down.code).toBe(1);
    expect(down.stderr.trim()).toMatch(/^unavailable: /);
  });
});

describe('emails of a stream', () => {
  it('send --stream broadcast --topic stores both, get shows them, list --stream filters; a topic alone is refused', async () => {
    const sent = await json<{ id: string }>([
      'emails',
      'send',
      ...['-f', 'news@example.com', '-t', 'reader@example.net', '-s', 'News', '--text', 'hi'],
      ...['--stream', 'broadcast', '--topic', 'weekly', '--json'],
    ]);
    const email = await json<Record<string, unknown>>(['emails', 'get', sent.id]);
    expect(email).toMatchObject({ id: sent.id, stream: 'broadcast', topic: 'weekly' });
    expect((await ok(['emails', 'get', sent.id])).stdout).toMatch(/^stream\s+broadcast \(topic weekly\)$/m);

    const listed = await json<{ data: { id: string; stream: string }[]; total: number }>([
      ...['emails', 'list', '--stream', 'broadcast', '--page-size', '100'],
    ]);
    expect(listed.data.map((e) => e.id)).toContain(sent.id);
    expect(listed.data.every((e) => e.stream === 'broadcast')).toBe(true);
    expect(listed.total).toBe(listed.data.length);

    const refused = await mailer([
      ...['emails', 'send', '-f', 'news@example.com', '-t', 'a@example.net', '-s', 'x', '--text', 'x'],
      ...['--topic', 'weekly'],
    ]);
    expect(refused.code).toBe(1);
    expect(refused.stderr.trim()).toBe('validation error: topic is only allowed with stream "broadcast"');
    expect((await mailer(['emails', 'list', '--stream', 'bulk'])).code).toBe(2);
  });
});
