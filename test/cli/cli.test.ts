import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../helpers/http.js';
import { ADMIN_TOKEN, stackEnv, startStack, type Stack } from '../helpers/stack.js';
import { startWebhookReceiver } from '../helpers/webhook-receiver.js';

/**
 * The operator CLI as a user runs it: `bin/run.js` in a child process, against the real service (its
 * Connect API over HTTP/2, PostgreSQL, Temporal, a receiving SMTP server), configured through
 * MAILER_URL, MAILER_API_KEY and MAILER_ADMIN_TOKEN.
 */

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const BIN = path.join(ROOT, 'bin/run.js');

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

let stack: Stack;
let workDir: string;
let baseEnv: NodeJS.ProcessEnv;

/** Runs `mailer <args>` to its end. */
function mailer(args: string[], env: NodeJS.ProcessEnv = {}, timeoutMs = 45_000): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd: workDir, env: { ...baseEnv, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`mailer ${args.join(' ')} did not finish in ${timeoutMs} ms\nstdout: ${stdout}\nstderr: ${stderr}`));
    }, timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** Runs `mailer <args> --json`, expects exit 0 and answers the parsed stdout. */
async function json<T = Record<string, unknown>>(args: string[], env: NodeJS.ProcessEnv = {}): Promise<T> {
  const r = await mailer([...args, '--json'], env);
  expect(r.code, `mailer ${args.join(' ')} --json\nstdout: ${r.stdout}\nstderr: ${r.stderr}`).toBe(0);
  return JSON.parse(r.stdout) as T;
}

/** Runs `mailer <args>` and expects exit 0. */
async function ok(args: string[], env: NodeJS.ProcessEnv = {}): Promise<Run> {
  const r = await mailer(args, env);
  expect(r.code, `mailer ${args.join(' ')}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`).toBe(0);
  return r;
}

beforeAll(async () => {
  stack = await startStack({ MAILER_WEBHOOK_ALLOW_PRIVATE: '1' });
  workDir = await fs.mkdtemp(path.join(stack.dataDir, 'cli-'));
  // Only what the CLI reads, so that nothing of the test runner's environment configures it.
  const { MAILER_URL: _u, MAILER_API_KEY: _k, MAILER_ADMIN_TOKEN: _t, ...rest } = process.env;
  baseEnv = { ...rest, MAILER_URL: `http://${stack.grpcAddress}`, MAILER_API_KEY: stack.apiKey, MAILER_ADMIN_TOKEN: ADMIN_TOKEN };
});
afterAll(async () => {
  await stack?.stop();
});

describe('help and usage', () => {
  it('--help lists the topics, and every command has examples', async () => {
    const root = await ok(['--help']);
    for (const topic of ['emails', 'scheduled', 'batches', 'accounts', 'domains', 'keys', 'webhooks', 'suppressions', 'server']) expect(root.stdout).toMatch(new RegExp(`^\\s+${topic}\\s`, 'm'));
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
    const noTime = await mailer(['scheduled', 'create', '-f', 'hello@example.com', '-t', 'a@example.net', '-s', 'x', '--text', 'x']);
    expect(noTime.code).toBe(2);
    const badIn = await mailer(['scheduled', 'create', '--in', 'soon', '-f', 'hello@example.com', '-t', 'a@example.net', '-s', 'x', '--text', 'x']);
    expect(badIn.code).toBe(2);
    expect(badIn.stderr).toContain('--in must be a duration');
    const noKey = await mailer(['emails', 'list'], { MAILER_API_KEY: '' });
    expect(noKey.code).toBe(2);
    expect(noKey.stderr).toContain('MAILER_API_KEY');
    const noFile = await mailer(['emails', 'send', '-f', 'hello@example.com', '-t', 'a@example.net', '-s', 'x', '--html-file', 'missing.html']);
    expect(noFile.code).toBe(2);
    expect(noFile.stderr).toContain('missing.html');
  });
});

describe('emails', () => {
  it('send with --html-file and --attach arrives at the SMTP server; --json answers the typed result; get and list show it', async () => {
    await fs.writeFile(path.join(workDir, 'body.html'), '<h1>Hello from the CLI</h1>');
    await fs.writeFile(path.join(workDir, 'report.csv'), 'a,b\n1,2\n');
    await fs.writeFile(path.join(workDir, 'blob.bin'), Buffer.from([0, 1, 2, 3, 254, 255]));
    const before = stack.sink.messages.length;
    const sent = await json<{ id: string; message_id: string; status: string }>([
      'emails', 'send',
      '--from', 'CLI <cli@example.com>',
      '--to', 'first@example.net', '--to', 'second@example.net',
      '--cc', 'copy@example.net',
      '--reply-to', 'replies@example.com',
      '--subject', 'From the CLI',
      '--html-file', 'body.html',
      '--text', 'Hello from the CLI',
      '--attach', 'report.csv',
      '--attach', 'blob.bin;type=application/x-test',
      '--header', 'X-Campaign: cli-test',
      '--tag', 'source=cli',
    ]);
    expect(sent).toEqual({ id: expect.stringMatching(/^em_/), message_id: '', status: 'pending' });

    const [msg] = (await stack.sink.waitFor(before + 1)).slice(before);
    const parsed = msg!.parsed;
    expect(parsed.subject).toBe('From the CLI');
    expect(parsed.html).toContain('<h1>Hello from the CLI</h1>');
    expect(parsed.text?.trim()).toBe('Hello from the CLI');
    expect(parsed.headers.get('x-campaign')).toBe('cli-test');
    expect(msg!.envelopeTo.sort()).toEqual(['copy@example.net', 'first@example.net', 'second@example.net']);
    const attachments = parsed.attachments.map((a) => ({ filename: a.filename, type: a.contentType, content: a.content.toString('base64') }));
    expect(attachments).toEqual([
      { filename: 'report.csv', type: 'text/csv', content: Buffer.from('a,b\n1,2\n').toString('base64') },
      { filename: 'blob.bin', type: 'application/x-test', content: Buffer.from([0, 1, 2, 3, 254, 255]).toString('base64') },
    ]);

    const email = await eventually(async () => {
      const e = await json<Record<string, unknown>>(['emails', 'get', sent.id]);
      return e.status === 'delivered' ? e : undefined;
    }, 20_000, 200);
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

    const listed = await json<{ data: { id: string }[]; total: number }>(['emails', 'list', '--job-type', 'direct', '--page-size', '5']);
    expect(listed.data.map((e) => e.id)).toContain(sent.id);
    expect(listed.total).toBeGreaterThanOrEqual(1);
    const table = await ok(['emails', 'list', '--status', 'delivered']);
    expect(table.stdout).toMatch(/^ID\s+STATUS\s+FROM\s+TO\s+SUBJECT\s+CREATED$/m);
    expect(table.stdout).toContain(sent.id);
    expect(table.stdout).toMatch(/page 1 of \d+ \(\d+ in all\)/);
    const none = await json<{ data: unknown[]; total: number }>(['emails', 'list', '--status', 'bounced']);
    expect(none).toEqual({ data: [], total: 0 });
  });

  it('an API error exits 1 with the spec\'s `error: message` on stderr', async () => {
    const key = await json<{ key: string }>(['keys', 'create', '--account', stack.accountId, '--name', 'reader', '--permission', 'read_only']);
    const denied = await mailer(['emails', 'send', '-f', 'hello@example.com', '-t', 'a@example.net', '-s', 'x', '--text', 'x', '--json'], { MAILER_API_KEY: key.key });
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

describe('scheduled emails', () => {
  it('create --in 2s is sent when its time comes; get and list follow it', async () => {
    const before = stack.sink.messages.length;
    const created = await json<{ id: string; status: string }>(['scheduled', 'create', '--in', '2s', '-f', 'hello@example.com', '-t', 'later@example.net', '-s', 'Two seconds later', '--text', 'Later']);
    expect(created).toEqual({ id: expect.stringMatching(/^sch_/), status: 'enqueued' });
    const [msg] = (await stack.sink.waitFor(before + 1, 30_000)).slice(before);
    const arrived = Date.now();
    expect(msg!.parsed.subject).toBe('Two seconds later');

    const sent = await eventually(async () => {
      const s = await json<{ status: string; attempts: number; scheduled_at: string; created_at: string }>(['scheduled', 'get', created.id]);
      return s.status === 'sent' ? s : undefined;
    }, 20_000, 200);
    expect(sent.attempts).toBe(1);
    // --in 2s: two seconds after the request, and never sent before that.
    const due = Date.parse(sent.scheduled_at);
    expect(due - Date.parse(sent.created_at)).toBeGreaterThan(0);
    expect(due - Date.parse(sent.created_at)).toBeLessThanOrEqual(2_000);
    expect(arrived).toBeGreaterThanOrEqual(due);
    const emails = await json<{ data: { subject: string }[] }>(['emails', 'list', '--job-id', created.id]);
    expect(emails.data.map((e) => e.subject)).toEqual(['Two seconds later']);
    const list = await ok(['scheduled', 'list', '--status', 'sent']);
    expect(list.stdout).toContain(created.id);
  });

  it('cancel stops one that waits', async () => {
    const at = new Date(Date.now() + 3_600_000).toISOString();
    const created = await json<{ id: string }>(['scheduled', 'create', '--at', at, '-f', 'hello@example.com', '-t', 'never@example.net', '-s', 'Never', '--text', 'Never']);
    const waiting = await json<{ scheduled_emails: { id: string }[] }>(['scheduled', 'list', '--status', 'scheduled']);
    expect(waiting.scheduled_emails.map((s) => s.id)).toContain(created.id);
    const cancelled = await ok(['scheduled', 'cancel', created.id]);
    expect(cancelled.stdout.trim()).not.toBe('');
    expect(await json(['scheduled', 'get', created.id])).toMatchObject({ id: created.id, status: 'cancelled', scheduled_at: at });
    expect(await json(['scheduled', 'cancel', created.id])).toEqual({ success: true, message: expect.any(String) });
  });
});

describe('batches', () => {
  it('send --file with a JSON array follows the job with a progress bar until it completes', async () => {
    const emails = [1, 2, 3].map((i) => ({ from: 'hello@example.com', to: [`batch-json-${i}@example.net`], subject: `JSON batch ${i}`, text: `Email ${i}` }));
    await fs.writeFile(path.join(workDir, 'batch.json'), JSON.stringify(emails));
    const r = await ok(['batches', 'send', '--file', 'batch.json']);
    expect(r.stderr).toMatch(/Batch job bat_\w+ accepted: 3 emails/);
    expect(r.stderr).toMatch(/\[#{30}\] 3\/3 {2}sent 3 {2}failed 0 {2}completed/);
    expect(r.stdout).toMatch(/^status\s+completed$/m);
    expect(r.stdout).toMatch(/^sent_count\s+3$/m);
    const jobId = /^job_id\s+(bat_\w+)$/m.exec(r.stdout)?.[1];
    expect(jobId).toBeDefined();
    const subjects = stack.sink.messages.map((m) => m.parsed.subject);
    for (const e of emails) expect(subjects).toContain(e.subject);

    expect(await json(['batches', 'get', jobId!])).toMatchObject({ job_id: jobId, status: 'completed', total_count: 3, sent_count: 3, failed_count: 0, completed_at: expect.any(String) });
    const watched = await ok(['batches', 'watch', jobId!]);
    expect(watched.stderr).toContain('3/3');
    const list = await json<{ batch_jobs: { job_id: string }[]; total_count: number }>(['batches', 'list', '--status', 'completed']);
    expect(list.batch_jobs.map((j) => j.job_id)).toContain(jobId);
  });

  it('send --file with a CSV file, --json prints the finished job', async () => {
    await fs.writeFile(path.join(workDir, 'note.txt'), 'attached');
    const csv = [
      'from,to,subject,text,attachments,tag:campaign,header:X-Batch',
      'hello@example.com,csv-1@example.net;csv-2@example.net,CSV batch 1,"Hello, one",note.txt,spring,csv',
      'hello@example.com,"""Doe, Jane"" <csv-3@example.net>",CSV batch 2,"Two lines\nof text",,,',
    ].join('\n');
    await fs.writeFile(path.join(workDir, 'batch.csv'), csv);
    const before = stack.sink.messages.length;
    const job = await json<Record<string, unknown>>(['batches', 'send', '--file', 'batch.csv']);
    expect(job).toMatchObject({ job_id: expect.stringMatching(/^bat_/), status: 'completed', total_count: 2, sent_count: 2, failed_count: 0 });
    const got = (await stack.sink.waitFor(before + 2)).slice(before);
    const one = got.find((m) => m.parsed.subject === 'CSV batch 1')!;
    expect(one.envelopeTo.sort()).toEqual(['csv-1@example.net', 'csv-2@example.net']);
    expect(one.parsed.text?.trim()).toBe('Hello, one');
    expect(one.parsed.headers.get('x-batch')).toBe('csv');
    expect(one.parsed.attachments.map((a) => a.content.toString())).toEqual(['attached']);
    const two = got.find((m) => m.parsed.subject === 'CSV batch 2')!;
    expect(two.envelopeTo).toEqual(['csv-3@example.net']);
    expect(two.parsed.text?.trim()).toBe('Two lines\nof text');
    const emails = await json<{ data: { id: string; subject: string }[] }>(['emails', 'list', '--job-id', job.job_id as string]);
    expect(emails.data.map((e) => e.subject).sort()).toEqual(['CSV batch 1', 'CSV batch 2']);
    const first = emails.data.find((e) => e.subject === 'CSV batch 1')!;
    expect(await json(['emails', 'get', first.id])).toMatchObject({ tags: { campaign: 'spring' }, headers: { 'X-Batch': 'csv' }, job_type: 'batch' });
  });

  it('a bad batch file is a usage error; a batch the API refuses exits 1', async () => {
    await fs.writeFile(path.join(workDir, 'bad.json'), JSON.stringify([{ from: 'hello@example.com', to: ['a@example.net'], sbject: 'typo', text: 'x' }]));
    const bad = await mailer(['batches', 'send', '--file', 'bad.json']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('emails[0]');
    await fs.writeFile(path.join(workDir, 'refused.json'), JSON.stringify([{ from: 'hello@example.com', to: ['a@example.net'], subject: '', text: 'x' }]));
    const refused = await mailer(['batches', 'send', '--file', 'refused.json']);
    expect(refused.code).toBe(1);
    expect(refused.stderr.trim()).toMatch(/^validation error: emails\[0\]\.subject/);
  });
});

describe('management', () => {
  it('keys create shows the key once; keys list never does; a deleted key stops working', async () => {
    const created = await ok(['keys', 'create', '--account', stack.accountId, '--name', 'ci', '--permission', 'send_only', '--allowed-domain', 'example.com']);
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
    expect(row).toMatchObject({ name: 'ci', permission: 'send_only', allowed_domains: ['example.com'], usage: expect.any(Object) });
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

    const domain = await json<{ id: string; verified: boolean; dns_records: unknown[] }>(['domains', 'add', 'cli.example.org', '--account', account.id]);
    expect(domain.verified).toBe(false);
    expect(domain.dns_records.length).toBeGreaterThan(0);
    const verified = await ok(['domains', 'verify', domain.id, '--force']);
    expect(verified.stdout).toMatch(/^verified\s+yes$/m);
    expect(await json(['domains', 'tracking', domain.id, '--open', '--no-click'])).toMatchObject({ open_tracking: true, click_tracking: false });
    expect((await ok(['domains', 'list', '-a', account.id])).stdout).toMatch(/cli\.example\.org\s+yes\s+yes\s+no/);
    expect(await json(['accounts', 'get', account.id])).toMatchObject({ daily_quota: 1000, sent_today: 0 });
    expect(await json(['accounts', 'update', account.id, '--status', 'paused'])).toMatchObject({ status: 'paused' });
    expect((await mailer(['accounts', 'update', account.id])).code).toBe(2);
  });

  it('webhooks create shows the secret once; list never does; delete', async () => {
    const account = await json<{ id: string }>(['accounts', 'create', 'Hooks Corp']);
    const hook = await ok(['webhooks', 'create', 'http://127.0.0.1:9/hook', '--account', account.id, '--event', 'delivery', '--event', 'bounce']);
    const secret = /^\s+(\S+)$/m.exec(hook.stdout.split('Signing secret')[1] ?? '')?.[1];
    expect(secret).toBeDefined();
    const hookId = /^id\s+(wh_\w+)$/m.exec(hook.stdout)?.[1];
    const hooks = await json<{ webhooks: Record<string, unknown>[] }>(['webhooks', 'list', '-a', account.id]);
    expect(hooks.webhooks).toEqual([{ id: hookId, url: 'http://127.0.0.1:9/hook', events: ['delivery', 'bounce'], created_at: expect.any(String) }]);
    expect(JSON.stringify(hooks)).not.toContain(secret);
    expect(await json(['webhooks', 'delete', hookId!])).toMatchObject({ success: true });
    expect(await json(['webhooks', 'list', '-a', account.id])).toEqual({ webhooks: [] });

    const wrongToken = await mailer(['accounts', 'list'], { MAILER_ADMIN_TOKEN: 'nope' });
    expect(wrongToken.code).toBe(1);
    expect(wrongToken.stderr).toMatch(/^unauthorized: /);
  });

  it('webhooks verify, deliveries and resend; emails events; suppressions list and delete', async () => {
    const receiver = await startWebhookReceiver();
    try {
      let failing = true;
      receiver.respond = () => ({ status: failing ? 500 : 200 });
      const hook = await json<{ id: string }>(['webhooks', 'create', `${receiver.url}/cli`, '-a', stack.accountId, '--event', 'bounce']);
      const verify = await mailer(['webhooks', 'verify', hook.id]);
      expect(verify.code).toBe(1);
      expect(verify.stdout).toContain('Failed: HTTP 500');
      failing = false;
      expect(await json(['webhooks', 'verify', hook.id])).toEqual({ success: true, status_code: 200 });

      stack.sink.refuseRecipient = (a) => (a.startsWith('gone') ? '550 5.1.1 <gone>: no such user' : undefined);
      failing = true;
      const sent = await json<{ id: string }>(['emails', 'send', '--from', 'sender@example.com', '--to', 'gone@example.net', '--subject', 'cli bounce', '--text', 'x']);
      const discarded = await eventually(async () => {
        const r = await json<{ deliveries: { id: string; status: string; attempts: unknown[] }[] }>(['webhooks', 'deliveries', hook.id, '--status', 'discarded']);
        return r.deliveries[0];
      }, 30_000, 500);
      expect(discarded.attempts).toHaveLength(4);
      expect((await ok(['webhooks', 'deliveries', hook.id])).stdout).toMatch(/bounce\s+em_\w+\s+discarded\s+500 → 500 → 500 → 500/);
      failing = false;
      expect(await json(['webhooks', 'resend', discarded.id])).toMatchObject({ id: discarded.id, status: 'pending' });
      await eventually(async () => receiver.on('/cli').filter((h) => h.body.event === 'bounce').length === 5, 20_000, 100);

      const timeline = await ok(['emails', 'events', sent.id]);
      expect(timeline.stdout).toMatch(/\ssend\s/);
      expect(timeline.stdout).toMatch(/\sbounce\s+\{"bounce_type":"Permanent"/);
      const supp = await json<{ suppressions: { id: string; email_address: string }[] }>(['suppressions', 'list', '-a', stack.accountId]);
      const gone = supp.suppressions.find((x) => x.email_address === 'gone@example.net');
      expect(gone).toBeDefined();
      expect(await json(['suppressions', 'delete', gone!.id])).toMatchObject({ success: true });
      expect((await ok(['suppressions', 'list', '-a', stack.accountId])).stdout).not.toContain('gone@example.net');
    } finally {
      stack.sink.refuseRecipient = () => undefined;
      await receiver.close();
    }
  }, 60_000);
});

describe('server', () => {
  it('migrate finds the database up to date', async () => {
    const r = await json<{ applied: number[]; version: number }>(['server', 'migrate'], { DATABASE_URL: stack.databaseUrl });
    expect(r.applied).toEqual([]);
    expect(r.version).toBeGreaterThanOrEqual(2);
  });

  it('start --role api serves the API until SIGINT', async () => {
    const env = { ...stackEnv(stack.databaseUrl, stack.sink.url, stack.taskQueue, stack.dataDir), MAILER_ROLE: 'worker' };
    const child = spawn(process.execPath, [BIN, 'server', 'start', '--role', 'api'], { cwd: workDir, env, stdio: ['ignore', 'pipe', 'pipe'] });
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
