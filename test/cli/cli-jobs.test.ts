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

describe('scheduled emails', () => {
  it('create --in 2s is sent when its time comes; get and list follow it', async () => {
    const before = stack.sink.messages.length;
    const created = await json<{ id: string; status: string }>([
      'scheduled',
      'create',
      '--in',
      '2s',
      '-f',
      'hello@example.com',
      '-t',
      'later@example.net',
      '-s',
      'Two seconds later',
      '--text',
      'Later',
    ]);
    expect(created).toEqual({ id: expect.stringMatching(/^sch_/), status: 'enqueued' });
    const [msg] = (await stack.sink.waitFor(before + 1, 30_000)).slice(before);
    const arrived = Date.now();
    expect(msg!.parsed.subject).toBe('Two seconds later');

    const sent = await eventually(
      async () => {
        const s = await json<{ status: string; attempts: number; scheduled_at: string; created_at: string }>([
          'scheduled',
          'get',
          created.id,
        ]);
        return s.status === 'sent' ? s : undefined;
      },
      20_000,
      200,
    );
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
    const created = await json<{ id: string }>([
      'scheduled',
      'create',
      '--at',
      at,
      '-f',
      'hello@example.com',
      '-t',
      'never@example.net',
      '-s',
      'Never',
      '--text',
      'Never',
    ]);
    const waiting = await json<{ scheduled_emails: { id: string }[] }>(['scheduled', 'list', '--status', 'scheduled']);
    expect(waiting.scheduled_emails.map((s) => s.id)).toContain(created.id);
    const cancelled = await ok(['scheduled', 'cancel', created.id]);
    expect(cancelled.stdout.trim()).not.toBe('');
    expect(await json(['scheduled', 'get', created.id])).toMatchObject({
      id: created.id,
      status: 'cancelled',
      scheduled_at: at,
    });
    expect(await json(['scheduled', 'cancel', created.id])).toEqual({ success: true, message: expect.any(String) });
  });
});

describe('batches', () => {
  it('send --file with a JSON array follows the job with a progress bar until it completes', async () => {
    const emails = [1, 2, 3].map((i) => ({
      from: 'hello@example.com',
      to: [`batch-json-${i}@example.net`],
      subject: `JSON batch ${i}`,
      text: `Email ${i}`,
    }));
    await fs.writeFile(path.join(cli.workDir, 'batch.json'), JSON.stringify(emails));
    const r = await ok(['batches', 'send', '--file', 'batch.json']);
    expect(r.stderr).toMatch(/Batch job bat_\w+ accepted: 3 emails/);
    expect(r.stderr).toMatch(/\[#{30}\] 3\/3 {2}sent 3 {2}failed 0 {2}completed/);
    expect(r.stdout).toMatch(/^status\s+completed$/m);
    expect(r.stdout).toMatch(/^sent_count\s+3$/m);
    const jobId = /^job_id\s+(bat_\w+)$/m.exec(r.stdout)?.[1];
    expect(jobId).toBeDefined();
    const subjects = stack.sink.messages.map((m) => m.parsed.subject);
    for (const e of emails) expect(subjects).toContain(e.subject);

    expect(await json(['batches', 'get', jobId!])).toMatchObject({
      job_id: jobId,
      status: 'completed',
      total_count: 3,
      sent_count: 3,
      failed_count: 0,
      completed_at: expect.any(String),
    });
    const watched = await ok(['batches', 'watch', jobId!]);
    expect(watched.stderr).toContain('3/3');
    const list = await json<{ batch_jobs: { job_id: string }[]; total_count: number }>([
      'batches',
      'list',
      '--status',
      'completed',
    ]);
    expect(list.batch_jobs.map((j) => j.job_id)).toContain(jobId);
  });

  it('send --file with a CSV file, --json prints the finished job', async () => {
    await fs.writeFile(path.join(cli.workDir, 'note.txt'), 'attached');
    const csv = [
      'from,to,subject,text,attachments,tag:campaign,header:X-Batch,stream,topic',
      'hello@example.com,csv-1@example.net;csv-2@example.net,CSV batch 1,"Hello, one",note.txt,spring,csv,,',
      'hello@example.com,"""Doe, Jane"" <csv-3@example.net>",CSV batch 2,"Two lines\nof text",,,,broadcast,csv.news',
    ].join('\n');
    await fs.writeFile(path.join(cli.workDir, 'batch.csv'), csv);
    const before = stack.sink.messages.length;
    const job = await json<Record<string, unknown>>(['batches', 'send', '--file', 'batch.csv']);
    expect(job).toMatchObject({
      job_id: expect.stringMatching(/^bat_/),
      status: 'completed',
      total_count: 2,
      sent_count: 2,
      failed_count: 0,
    });
    // A copy per recipient: two of the first email, one of the second.
    const got = (await stack.sink.waitFor(before + 3)).slice(before);
    const one = got.find((m) => m.parsed.subject === 'CSV batch 1')!;
    expect(
      got
        .filter((m) => m.parsed.subject === 'CSV batch 1')
        .flatMap((m) => m.envelopeTo)
        .sort(),
    ).toEqual(['csv-1@example.net', 'csv-2@example.net']);
    expect(one.parsed.text?.trim()).toBe('Hello, one');
    expect(one.parsed.headers.get('x-batch')).toBe('csv');
    expect(one.parsed.attachments.map((a) => a.content.toString())).toEqual(['attached']);
    const two = got.find((m) => m.parsed.subject === 'CSV batch 2')!;
    expect(two.envelopeTo).toEqual(['csv-3@example.net']);
    expect(two.parsed.text?.trim()).toBe('Two lines\nof text');
    const emails = await json<{ data: { id: string; subject: string; stream: string; topic?: string }[] }>([
      'emails',
      'list',
      '--job-id',
      job.job_id as string,
    ]);
    expect(emails.data.map((e) => [e.subject, e.stream, e.topic]).sort()).toEqual([
      ['CSV batch 1', 'transactional', undefined],
      ['CSV batch 2', 'broadcast', 'csv.news'],
    ]);
    const first = emails.data.find((e) => e.subject === 'CSV batch 1')!;
    expect(await json(['emails', 'get', first.id])).toMatchObject({
      tags: { campaign: 'spring' },
      headers: { 'X-Batch': 'csv' },
      job_type: 'batch',
    });
  });

  it('a bad batch file is a usage error; a batch the API refuses exits 1', async () => {
    await fs.writeFile(
      path.join(cli.workDir, 'bad.json'),
      JSON.stringify([{ from: 'hello@example.com', to: ['a@example.net'], sbject: 'typo', text: 'x' }]),
    );
    const bad = await mailer(['batches', 'send', '--file', 'bad.json']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('emails[0]');
    await fs.writeFile(
      path.join(cli.workDir, 'refused.json'),
      JSON.stringify([{ from: 'hello@example.com', to: ['a@example.net'], subject: '', text: 'x' }]),
    );
    const refused = await mailer(['batches', 'send', '--file', 'refused.json']);
    expect(refused.code).toBe(1);
    expect(refused.stderr.trim()).toMatch(/^validation error: emails\[0\]\.subject/);
  });
});
