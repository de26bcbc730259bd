import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { admin } from '../helpers/admin-fixtures.js';
import { startDnsServer, type DnsServer } from '../helpers/dns-server.js';
import { call, eventually } from '../helpers/http.js';
import { deliverInbound } from '../helpers/inbound-delivery.js';
import { ADMIN_TOKEN } from '../helpers/stack.js';
import { BIN, useCli } from '../helpers/use-cli.js';

/**
 * `mailer inbound list|get|tail` as a user runs them: `bin/run.js` in a child process against the real service,
 * with mail delivered over SMTP into its inbound listener; as the account (its API key) and as the operator
 * (the admin token, --account or --admin).
 */
let zone: DnsServer;
// A DNS server of the test's own, so that judging the mail (SPF, DKIM, DMARC of sender.test) asks no other.
const cli = useCli(async () => {
  zone = await startDnsServer();
  return { MAILER_DNS_SERVERS: zone.servers };
});
afterAll(async () => {
  await zone?.close();
});
const { stack, mailer, json, ok } = cli;

interface Inbound {
  id: string;
  subject: string;
  from: string;
  mailbox_hash: string;
  attachments: { filename: string | null; content_type: string; size: string | number }[];
  authentication: { spf: string; dkim: string; dmarc: string };
}

const ATTACHMENT = Buffer.from('%PDF-1.4 not really a pdf\n\u0000\u0001\u0002binary tail');

/** Delivers a message to the account's route and answers it as the API lists it. */
async function receive(subject: string, to = 'help@example.com'): Promise<Inbound> {
  expect(
    await deliverInbound(stack, {
      from: 'Carol <carol@sender.test>',
      to,
      subject,
      text: `About ${subject}`,
      attachments: [{ filename: 'invoice.pdf', content: ATTACHMENT, contentType: 'application/pdf' }],
    }),
  ).toMatch(/^250/);
  return eventually(async () => {
    const res = await call<{ inbound_emails: Inbound[] }>('GET', `${stack.api}/inbound/emails`, {
      token: stack.apiKey,
    });
    return res.body.inbound_emails.find((m) => m.subject === subject);
  });
}

/** `mailer inbound tail --count 1 <args>` in the background: `following` once it says so, `done` when it exits. */
function follow(args: string[], env: NodeJS.ProcessEnv = {}) {
  const child = spawn(process.execPath, [BIN, 'inbound', 'tail', '--count', '1', '--interval', '200', ...args], {
    cwd: cli.workDir,
    env: {
      ...process.env,
      MAILER_URL: `http://${stack.grpcAddress}`,
      MAILER_API_KEY: stack.apiKey,
      MAILER_ADMIN_TOKEN: ADMIN_TOKEN,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  const following = new Promise<void>((resolve, reject) => {
    child.stderr.on('data', (c: Buffer) => {
      stderr += c.toString();
      if (stderr.includes('following')) resolve();
    });
    child.on('close', () => reject(new Error(`mailer inbound tail ${args.join(' ')} ended first: ${stderr}`)));
  });
  const done = new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
  return { following, done };
}

describe('inbound', () => {
  let first: Inbound;

  it('--help lists the commands', async () => {
    expect((await ok(['--help'])).stdout).toMatch(/^\s+inbound\s/m);
    const topic = await ok(['inbound', '--help']);
    for (const c of ['list', 'get', 'tail']) expect(topic.stdout).toContain(`inbound ${c}`);
  });

  it('list: the inbox newest first, as the account and as the operator', async () => {
    const route = await call('POST', `${stack.api}/inbound/routes`, {
      token: stack.apiKey,
      body: { match: 'help@example.com' },
    });
    expect(route.status, route.text).toBe(200);
    first = await receive('First question', 'help+billing@example.com');
    const second = await receive('Second question');

    const listed = await json<{ inbound_emails: Inbound[]; total: number }>(['inbound', 'list']);
    expect(listed.total).toBe(2);
    expect(listed.inbound_emails.map((m) => m.id)).toEqual([second.id, first.id]);
    expect(listed.inbound_emails[1]).toMatchObject({ from: 'carol@sender.test', mailbox_hash: 'billing' });

    const table = await ok(['inbound', 'list']);
    expect(table.stdout).toMatch(/ID\s+RECEIVED\s+FROM\s+SUBJECT\s+TAG\s+AUTHENTICATION/);
    expect(table.stdout).toMatch(
      new RegExp(
        `${first.id}\\s+\\S+\\s+carol@sender\\.test\\s+First question\\s+billing\\s+spf=none dkim=none dmarc=none`,
      ),
    );
    expect(table.stdout).toContain('page 1 of 1 (2 in all)');
    const paged = await json<{ inbound_emails: Inbound[]; total: number }>([
      'inbound',
      'list',
      '--page-size',
      '1',
      '--page',
      '2',
    ]);
    expect(paged.inbound_emails.map((m) => m.id)).toEqual([first.id]);

    // The operator reads any account's inbox with the admin token: no API key needed.
    const asOperator = await json<{ inbound_emails: Inbound[]; total: number }>(
      ['inbound', 'list', '--account', stack.accountId],
      { MAILER_API_KEY: '' },
    );
    expect(asOperator.inbound_emails.map((m) => m.id)).toEqual([second.id, first.id]);
    // Without either credential: a usage error naming both ways.
    const none = await mailer(['inbound', 'list'], { MAILER_API_KEY: '', MAILER_ADMIN_TOKEN: '' });
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('no API key');
    const noToken = await mailer(['inbound', 'list', '-a', stack.accountId], { MAILER_ADMIN_TOKEN: '' });
    expect(noToken.code).toBe(2);
    expect(noToken.stderr).toContain('no admin token');
  });

  it('get: the parsed message, its raw bytes and an attachment, to a file or stdout', async () => {
    const shown = await ok(['inbound', 'get', first.id]);
    expect(shown.stdout).toMatch(/from\s+Carol <carol@sender\.test>/);
    expect(shown.stdout).toMatch(/to\s+help\+billing@example\.com/);
    expect(shown.stdout).toMatch(/mailbox_hash\s+billing/);
    expect(shown.stdout).toMatch(/authentication\s+spf=none dkim=none dmarc=none/);
    expect(shown.stdout).toMatch(/N\s+FILENAME\s+TYPE\s+SIZE/);
    expect(shown.stdout).toMatch(new RegExp(`0\\s+invoice\\.pdf\\s+application/pdf\\s+${ATTACHMENT.length} bytes`));
    expect(shown.stdout).toContain('--- text ---\nAbout First question');
    const asJson = await json<Inbound>(['inbound', 'get', first.id]);
    expect(asJson).toMatchObject({ id: first.id, subject: 'First question', mailbox_hash: 'billing' });

    // The raw message, exactly as the API serves it.
    const served = await fetch(`${stack.api}/inbound/emails/${first.id}/raw`, {
      headers: { authorization: `Bearer ${stack.apiKey}` },
    });
    const rawBytes = Buffer.from(await served.arrayBuffer());
    expect(rawBytes.toString()).toContain('Subject: First question');
    const savedRaw = await ok(['inbound', 'get', first.id, '--raw', '--output', 'message.eml']);
    expect(savedRaw.stderr).toContain(
      `the raw message: ${rawBytes.length} bytes of message/rfc822 written to message.eml`,
    );
    expect((await fs.readFile(path.join(cli.workDir, 'message.eml'))).equals(rawBytes)).toBe(true);
    const rawOut = await ok(['inbound', 'get', first.id, '--raw']);
    expect(rawOut.stdout).toBe(rawBytes.toString());

    const savedAttachment = await ok(['inbound', 'get', first.id, '--attachment', '0', '-o', 'invoice.pdf']);
    expect(savedAttachment.stderr).toContain(
      `attachment 0 (invoice.pdf): ${ATTACHMENT.length} bytes of application/pdf`,
    );
    expect((await fs.readFile(path.join(cli.workDir, 'invoice.pdf'))).equals(ATTACHMENT)).toBe(true);

    // As the operator, the same bytes.
    await ok(['inbound', 'get', first.id, '--admin', '--attachment', '0', '-o', 'operator.pdf'], {
      MAILER_API_KEY: '',
    });
    expect((await fs.readFile(path.join(cli.workDir, 'operator.pdf'))).equals(ATTACHMENT)).toBe(true);
  });

  it('get: refusals exit 1 with the API message and leave no file; wrong flags exit 2', async () => {
    const missing = await mailer(['inbound', 'get', 'in_nope', '--raw', '-o', 'missing.eml']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^not found: .*in_nope/);
    await expect(fs.access(path.join(cli.workDir, 'missing.eml'))).rejects.toThrow();
    const noSuchAttachment = await mailer(['inbound', 'get', first.id, '--attachment', '5']);
    expect(noSuchAttachment.code).toBe(1);
    expect(noSuchAttachment.stderr).toMatch(/^not found: /);

    // Another account's message is not found with this account's key.
    const other = await admin<{ id: string }>(stack, 'POST', '/accounts', { name: 'Other' });
    const otherKey = await admin<{ key: string }>(stack, 'POST', `/accounts/${other.body.id}/api-keys`, {
      name: 'k',
      permission: 'all',
    });
    const foreign = await mailer(['inbound', 'get', first.id], { MAILER_API_KEY: otherKey.body.key });
    expect(foreign.code).toBe(1);
    expect(foreign.stderr).toMatch(/^not found: /);
    const otherInbox = await json<{ total: number }>(['inbound', 'list', '-a', other.body.id]);
    expect(otherInbox.total).toBe(0);

    for (const args of [
      ['--raw', '--json'],
      ['--output', 'x.eml'],
      ['--raw', '--attachment', '0'],
    ]) {
      const wrong = await mailer(['inbound', 'get', first.id, ...args]);
      expect(wrong.code, args.join(' ')).toBe(2);
    }
  });

  it('tail: the newest --last first, then each new message as it arrives, as the account and the operator', async () => {
    const last = await ok(['inbound', 'tail', '--last', '1', '--count', '1']);
    expect(last.stdout.trim().split('\n')).toEqual([expect.stringContaining('Second question')]);

    // Followers started before the message arrives print it, and only it.
    const asAccount = follow(['--json']);
    const asOperator = follow(['--account', stack.accountId], { MAILER_API_KEY: '' });
    // Once both have read the inbox as it is (their first poll, after which they say they follow), a new message.
    await Promise.all([asAccount.following, asOperator.following]);
    const third = await receive('Third question');

    const [accountRun, operatorRun] = await Promise.all([asAccount.done, asOperator.done]);
    expect(accountRun.code, accountRun.stderr).toBe(0);
    const lines = accountRun.stdout.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({ id: third.id, subject: 'Third question' });
    expect(operatorRun.code, operatorRun.stderr).toBe(0);
    expect(operatorRun.stdout.trim()).toMatch(
      new RegExp(
        `^\\S+  ${third.id}  carol@sender\\.test  → help@example\\.com  Third question  spf=none dkim=none dmarc=none$`,
      ),
    );
  });
});
