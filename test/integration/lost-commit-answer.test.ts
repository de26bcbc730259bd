import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/logger.js';
import { startMailer, type Mailer } from '../../src/main.js';
import { call, eventually } from '../helpers/http.js';
import { startPgProxy, type PgProxy } from '../helpers/pg-proxy.js';
import { startSmtpSink, type SmtpSink } from '../helpers/smtp-sink.js';
import { createTestDatabase, stackEnv } from '../helpers/stack.js';

/**
 * A 503 means "not accepted" (issue 22, item 10). The service reaches PostgreSQL through a proxy that loses
 * the answer to one statement: the write commits, the connection dies before its answer. The client must get
 * the 200 of an email that is stored (and delivered once), never a 503 a careful client would retry into a
 * second copy; and a write cut before it reached the server is the 503 it truly is, nothing stored.
 */

let databaseUrl: string;
let proxy: PgProxy;
let sink: SmtpSink;
let mailer: Mailer;
let db: postgres.Sql;
let base: string;
let key: string;

beforeAll(async () => {
  databaseUrl = await createTestDatabase();
  proxy = await startPgProxy(databaseUrl);
  sink = await startSmtpSink();
  db = postgres(databaseUrl, { max: 1, onnotice: () => {} });
  const taskQueue = `lost-commit-${crypto.randomBytes(4).toString('hex')}`;
  const dataDir = path.join(inject('tmpRoot'), taskQueue);
  await fs.mkdir(dataDir, { recursive: true, mode: 0o700 });
  const config = loadConfig(stackEnv(proxy.url, sink.url, taskQueue, dataDir, { MAILER_RATE_LIMIT: '100000' }));
  mailer = await startMailer(config, {
    logger: createLogger(process.env.TEST_LOG_LEVEL ?? 'error', 'lost-commit'),
    env: process.env,
  });
  base = `${mailer.restUrl}/v1/mail`;
  key = mailer.firstRun!.apiKey;
}, 60_000);

afterAll(async () => {
  await mailer?.stop();
  await proxy?.close();
  await sink?.close();
  await db?.end();
});

const draft = (subject: string, extra: Record<string, unknown> = {}) => ({
  from: 'sender@example.com',
  to: ['someone@example.net'],
  subject,
  text: subject,
  ...extra,
});

/** Copies of each message carrying `subject` at the receiving server, by Message-ID. */
const copiesOf = (subject: string) => sink.messages.filter((m) => m.parsed.subject === subject).map((m) => m.messageId);

/** Every message with `subject` arrived, `n` distinct ones, each once, and no second copy comes later. */
async function expectDeliveredOnce(subject: string, n: number): Promise<void> {
  await eventually(() => Promise.resolve(new Set(copiesOf(subject)).size >= n), 30_000, 50);
  await new Promise((r) => setTimeout(r, 1_000));
  const copies = copiesOf(subject);
  expect(new Set(copies).size, subject).toBe(n);
  expect(copies.length, `${subject}: copies of ${n} messages`).toBe(n);
}

describe('a lost commit answer is found out before the client is answered', () => {
  it('a single send whose commit answer is lost answers 200 with its id, stored and delivered once', async () => {
    const subject = `lost-answer-single-${crypto.randomBytes(4).toString('hex')}`;
    const cut = proxy.arm(subject, 'lose-answer');
    const res = await call('POST', `${base}/emails`, { token: key, body: draft(subject) });
    await cut;
    expect(res.status, res.text).toBe(200);
    const id = res.body.id as string;
    expect(id).toMatch(/^em_/);
    const [row] = await db`select id from emails where id = ${id}`;
    expect(row?.id).toBe(id);
    expect((await call('GET', `${base}/emails/${id}`, { token: key })).status).toBe(200);
    await expectDeliveredOnce(subject, 1);
  }, 60_000);

  it('a batch whose commit answer is lost answers 200 with its job, every email stored and delivered once', async () => {
    const subject = `lost-answer-batch-${crypto.randomBytes(4).toString('hex')}`;
    const cut = proxy.arm(subject, 'lose-answer');
    const res = await call('POST', `${base}/emails/batch`, {
      token: key,
      body: { emails: [draft(subject), draft(subject, { to: ['other@example.net'] })] },
    });
    await cut;
    expect(res.status, res.text).toBe(200);
    const jobId = res.body.jobId ?? res.body.job_id;
    const rows = await db`select id from emails where job_id = ${jobId as string}`;
    expect(rows.length).toBe(2);
    await expectDeliveredOnce(subject, 2);
  }, 60_000);

  it('a scheduled send whose commit answer is lost answers 200 with its id, stored, and fires once', async () => {
    const subject = `lost-answer-scheduled-${crypto.randomBytes(4).toString('hex')}`;
    const cut = proxy.arm(subject, 'lose-answer');
    const scheduledAt = new Date(Date.now() + 3_000).toISOString();
    const res = await call('POST', `${base}/emails/schedule`, {
      token: key,
      body: draft(subject, { scheduled_at: scheduledAt }),
    });
    await cut;
    expect(res.status, res.text).toBe(200);
    const id = res.body.id as string;
    const [row] = await db`select id from scheduled_emails where id = ${id}`;
    expect(row?.id).toBe(id);
    await expectDeliveredOnce(subject, 1);
  }, 60_000);

  it('concurrent sends written by one grouped statement whose answer is lost all answer 200, each delivered once', async () => {
    const subject = `lost-answer-group-${crypto.randomBytes(4).toString('hex')}`;
    const cut = proxy.arm(subject, 'lose-answer');
    // Sent in one turn: the accept writer (group commit) writes them with one statement.
    const answers = await Promise.all(
      [1, 2, 3, 4, 5].map(() => call('POST', `${base}/emails`, { token: key, body: draft(subject) })),
    );
    await cut;
    for (const res of answers) expect(res.status, res.text).toBe(200);
    const ids = answers.map((res) => res.body.id as string);
    expect((await db`select id from emails where id = any(${ids})`).length).toBe(5);
    await expectDeliveredOnce(subject, 5);
  }, 60_000);

  it('a send cut before its statement reached the database answers 503 and nothing is stored', async () => {
    const subject = `never-stored-${crypto.randomBytes(4).toString('hex')}`;
    const cut = proxy.arm(subject, 'drop');
    const res = await call('POST', `${base}/emails`, { token: key, body: draft(subject) });
    await cut;
    expect(res.status, res.text).toBe(503);
    expect(res.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
    const rows = await db`select id from emails where subject = ${subject}`;
    expect(rows.length).toBe(0);
    await new Promise((r) => setTimeout(r, 1_500));
    expect(copiesOf(subject)).toEqual([]);
  }, 60_000);
});
