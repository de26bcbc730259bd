import * as grpc from '@grpc/grpc-js';
import nodemailer from 'nodemailer';
import type SMTPTransport from 'nodemailer/lib/smtp-transport';
import { describe, expect, it } from 'vitest';
import { bearer, expectSameError, failed, ok, rpc, useGrpcClients } from '../helpers/grpc-client.js';
import { call, eventually, expectValidationError, validEmail, type JsonResponse } from '../helpers/http.js';
import { freePort } from '../helpers/ports.js';
import { ADMIN_TOKEN } from '../helpers/stack.js';
import { useStack } from '../helpers/use-stack.js';

/**
 * Streams (CONTRACT.md, "Streams, one-click unsubscribe and suppressions"): every send path takes `stream` and
 * a broadcast email's `topic`, stores them on the email, shows them, and GET /emails filters by stream; the
 * rules' 400s come from each path alike. The tests of one file share the default account, so the broadcast
 * emails it sends are counted as they go.
 */
const stack = useStack(async () => ({ MAILER_SUBMISSION_PORT: String(await freePort()) }));
const clients = useGrpcClients(stack);

type Obj = Record<string, unknown>;
const post = (path: string, body: unknown) => call('POST', `${stack.api}${path}`, { token: stack.apiKey, body });
const get = <T = Obj>(path: string) => call<T>('GET', `${stack.api}${path}`, { token: stack.apiKey });

/** Every broadcast email this file has sent, for the stream filter. */
const broadcastIds = new Set<string>();

async function sendOk(body: Obj): Promise<string> {
  const res = await post('/emails', body);
  expect(res.status, res.text).toBe(200);
  return res.body.id as string;
}

describe('a send’s stream and topic over REST', () => {
  it('are stored and shown: transactional by default without a topic, broadcast with its topic', async () => {
    const plain = await sendOk(validEmail({ subject: 'plain' }));
    const detail = await get(`/emails/${plain}`);
    expect(detail.body).toMatchObject({ id: plain, stream: 'transactional' });
    expect(detail.body).not.toHaveProperty('topic');

    const explicit = await sendOk(validEmail({ subject: 'explicit', stream: 'transactional', topic: null }));
    expect((await get(`/emails/${explicit}`)).body).toMatchObject({ stream: 'transactional' });

    const news = await sendOk(validEmail({ subject: 'news', stream: 'broadcast', topic: 'weekly.news' }));
    broadcastIds.add(news);
    expect((await get(`/emails/${news}`)).body).toMatchObject({ stream: 'broadcast', topic: 'weekly.news' });
    const untopical = await sendOk(validEmail({ subject: 'any', stream: 'broadcast' }));
    broadcastIds.add(untopical);
    const shown = (await get(`/emails/${untopical}`)).body;
    expect(shown).toMatchObject({ stream: 'broadcast' });
    expect(shown).not.toHaveProperty('topic');
  });

  it('refuses a bad stream or topic and a broadcast to more than one address, naming the field', async () => {
    const cases: [string, Obj, RegExp][] = [
      ['another stream', { stream: 'marketing' }, /^stream must be one of transactional, broadcast; got "marketing"$/],
      ['a topic without broadcast', { topic: 'news' }, /^topic is only allowed with stream "broadcast"$/],
      [
        'a topic with transactional',
        { stream: 'transactional', topic: 'news' },
        /^topic is only allowed with stream "broadcast"$/,
      ],
      ['a bad topic', { stream: 'broadcast', topic: 'weekly news' }, /^topic: "weekly news" must be 1 to 64 of/],
      ['a long topic', { stream: 'broadcast', topic: 'x'.repeat(65) }, /^topic: ".*" must be 1 to 64 of/],
      [
        'two addresses in to',
        { stream: 'broadcast', to: ['a@example.net', 'b@example.net'] },
        /^to: a broadcast email has exactly one recipient in to; got 2$/,
      ],
      ['a cc', { stream: 'broadcast', cc: ['c@example.net'] }, /^cc: a broadcast email has no cc recipients/],
      ['a bcc', { stream: 'broadcast', bcc: ['c@example.net'] }, /^bcc: a broadcast email has no bcc recipients/],
      ['a stream that is not a string', { stream: 7 }, /stream/],
    ];
    for (const [what, fields, message] of cases) {
      expectValidationError(await post('/emails', validEmail(fields)), what, message);
      const scheduled = await post('/emails/schedule', {
        ...validEmail(fields),
        scheduled_at: new Date(Date.now() + 3_600_000).toISOString(),
      });
      expectValidationError(scheduled, `scheduled: ${what}`, message);
    }
  });

  it('works with a template send', async () => {
    const created = await post('/templates', { name: 'Digest', subject: 'Digest for {{name}}', text: 'Hi {{name}}' });
    expect(created.status, created.text).toBe(200);
    const id = await sendOk({
      from: 'sender@example.com',
      to: ['reader@example.net'],
      template: { id: created.body.id, variables: { name: 'Ann' } },
      stream: 'broadcast',
      topic: 'digest',
    });
    broadcastIds.add(id);
    expect((await get(`/emails/${id}`)).body).toMatchObject({
      subject: 'Digest for Ann',
      stream: 'broadcast',
      topic: 'digest',
      template: { id: created.body.id },
    });
    const refused = await post('/emails', {
      from: 'sender@example.com',
      to: ['a@example.net', 'b@example.net'],
      template: { id: created.body.id, variables: { name: 'Ann' } },
      stream: 'broadcast',
    });
    expectValidationError(refused, 'templated broadcast to two', /^to: a broadcast email has exactly one recipient/);
  });

  it('gives each batch item its own stream and topic, and names the item in a refusal', async () => {
    const res = await post('/emails/batch', {
      emails: [
        validEmail({ subject: 'b0', to: ['x@example.net', 'y@example.net'] }),
        validEmail({ subject: 'b1', stream: 'broadcast', topic: 'offers' }),
        validEmail({ subject: 'b2', stream: 'broadcast' }),
      ],
    });
    expect(res.status, res.text).toBe(200);
    const jobId = res.body.job_id as string;
    const listed = await get<{ data: Obj[]; total: number }>(`/emails?job_id=${jobId}&page_size=10`);
    expect(listed.body.total).toBe(3);
    const bySubject = Object.fromEntries(listed.body.data.map((e) => [e.subject as string, e]));
    expect(bySubject.b0).toMatchObject({ stream: 'transactional' });
    expect(bySubject.b0).not.toHaveProperty('topic');
    expect(bySubject.b1).toMatchObject({ stream: 'broadcast', topic: 'offers' });
    expect(bySubject.b2).toMatchObject({ stream: 'broadcast' });
    for (const e of [bySubject.b1!, bySubject.b2!]) broadcastIds.add(e.id as string);
    expect((await get(`/emails/${bySubject.b1!.id as string}`)).body).toMatchObject({ topic: 'offers' });

    const refused = await post('/emails/batch', {
      emails: [
        validEmail(),
        validEmail({ stream: 'broadcast' }),
        validEmail(),
        validEmail({ stream: 'broadcast', cc: ['c@example.net'] }),
      ],
    });
    expectValidationError(refused, 'batch item 3', /^emails\[3\]\.cc: a broadcast email has no cc recipients/);
    expectValidationError(
      await post('/emails/batch', { emails: [validEmail({ topic: 'x' })] }),
      'batch item 0',
      /^emails\[0\]\.topic is only allowed with stream "broadcast"$/,
    );
  });

  it('carries a scheduled email’s stream and topic to the email it fires', async () => {
    const res = await post('/emails/schedule', {
      ...validEmail({ subject: 'scheduled news', stream: 'broadcast', topic: 'later' }),
      scheduled_at: new Date(Date.now() + 1_500).toISOString(),
    });
    expect(res.status, res.text).toBe(200);
    const listed = await eventually(async () => {
      const l = await get<{ data: Obj[]; total: number }>(`/emails?job_id=${res.body.id as string}`);
      return l.body.total === 1 ? l.body.data[0] : undefined;
    }, 15_000);
    expect(listed).toMatchObject({ subject: 'scheduled news', stream: 'broadcast', topic: 'later' });
    broadcastIds.add(listed.id as string);
  });
});

describe('SMTP submission’s X-Mail-Stream and X-Mail-Topic', () => {
  function client() {
    const url = new URL(stack.mailer.submissionUrl!);
    return nodemailer.createTransport({
      host: url.hostname,
      port: Number(url.port),
      secure: false,
      requireTLS: true,
      tls: { rejectUnauthorized: false },
      auth: { user: 'any', pass: stack.apiKey },
    } satisfies SMTPTransport.Options);
  }
  const idOf = (response: string) => /queued as (em_[0-9a-z]{26})\b/.exec(response)?.[1];

  it('store the stream and topic, and are not sent on', async () => {
    const subject = `submitted broadcast ${Date.now()}`;
    const info = await client().sendMail({
      from: 'sender@example.com',
      to: 'subscriber@example.net',
      subject,
      text: 'news',
      headers: { 'X-Mail-Stream': 'broadcast', 'X-Mail-Topic': 'smtp.news' },
    });
    const id = idOf(info.response)!;
    expect(id).toBeDefined();
    broadcastIds.add(id);
    const detail = await get(`/emails/${id}`);
    expect(detail.body).toMatchObject({ stream: 'broadcast', topic: 'smtp.news' });
    expect(Object.keys(detail.body.headers as object).filter((h) => /^x-mail-(stream|topic)$/i.test(h))).toEqual([]);
    const arrived = await eventually(async () => stack.sink.messages.find((m) => m.parsed.subject === subject));
    expect(arrived.raw.toString()).not.toMatch(/^x-mail-(stream|topic):/im);
  });

  it('refuse a bad value, a topic without broadcast and a broadcast to two, as the template headers do', async () => {
    const refusal = async (mail: Obj): Promise<string> => {
      const err = (await client()
        .sendMail({ from: 'sender@example.com', to: 'r@example.net', subject: 's', text: 't', ...mail })
        .then(
          () => undefined,
          (e: unknown) => e,
        )) as { response?: string } | undefined;
      if (!err) throw new Error('expected the message to be refused');
      return err.response ?? String(err);
    };
    expect(await refusal({ headers: { 'X-Mail-Stream': 'bulk' } })).toMatch(
      /^5\d\d .*X-Mail-Stream must be one of transactional, broadcast; got "bulk"/,
    );
    expect(await refusal({ headers: { 'X-Mail-Topic': 'news' } })).toMatch(
      /^5\d\d .*X-Mail-Topic is only allowed with stream "broadcast"/,
    );
    expect(await refusal({ headers: { 'X-Mail-Stream': 'broadcast', 'X-Mail-Topic': 'a b' } })).toMatch(
      /^5\d\d .*X-Mail-Topic: "a b" must be 1 to 64 of/,
    );
    expect(
      await refusal({ to: ['a@example.net', 'b@example.net'], headers: { 'X-Mail-Stream': 'broadcast' } }),
    ).toMatch(/^5\d\d .*a broadcast email has exactly one recipient in to; got 2/);
  });
});

describe('streams over gRPC', () => {
  it('SendEmail takes stream and topic, GetEmail and ListEmails show them, and refusals are REST’s', async () => {
    const key = bearer(stack.apiKey);
    const sent = ok(
      await rpc(
        clients.email,
        'SendEmail',
        {
          from: 'sender@example.com',
          to: ['grpc@example.net'],
          subject: 'grpc news',
          text: 'hi',
          stream: 'broadcast',
          topic: 'grpc',
        },
        key,
      ),
    );
    const id = sent.id as string;
    broadcastIds.add(id);
    const email = ok(await rpc(clients.email, 'GetEmail', { id }, key));
    expect(email).toMatchObject({ stream: 'broadcast', topic: 'grpc' });
    // REST shows the same email the same way.
    expect((await get(`/emails/${id}`)).body).toMatchObject({ stream: 'broadcast', topic: 'grpc' });

    const plain = ok(
      await rpc(
        clients.email,
        'SendEmail',
        { from: 'sender@example.com', to: ['g@example.net'], subject: 's', text: 't' },
        key,
      ),
    );
    const plainEmail = ok(await rpc(clients.email, 'GetEmail', { id: plain.id }, key));
    expect(plainEmail.stream).toBe('transactional');
    // proto-loader shows an absent optional field as null.
    expect(plainEmail.topic ?? null).toBeNull();

    const body = { from: 'sender@example.com', to: ['g@example.net'], subject: 's', text: 't', topic: 'x' };
    const rest = await post('/emails', body);
    expectSameError(
      failed(await rpc(clients.email, 'SendEmail', body, key)),
      grpc.status.INVALID_ARGUMENT,
      rest.body as never,
    );

    const listed = ok(await rpc(clients.email, 'ListEmails', { stream: 'broadcast', page_size: 100 }, key));
    const items = listed.data as Obj[];
    expect(items.every((e) => e.stream === 'broadcast')).toBe(true);
    expect(items.map((e) => e.id)).toContain(id);
  });
});

describe('GET /emails?stream=', () => {
  it('lists the emails of one stream, with the total of that stream; another value is a 400', async () => {
    const broadcast = await get<{ data: Obj[]; total: number }>('/emails?stream=broadcast&page_size=100');
    expect(broadcast.status, broadcast.text).toBe(200);
    expect(broadcast.body.total).toBe(broadcastIds.size);
    expect(new Set(broadcast.body.data.map((e) => e.id))).toEqual(broadcastIds);
    expect(broadcast.body.data.every((e) => e.stream === 'broadcast')).toBe(true);

    const all = await get<{ total: number }>('/emails?page_size=1');
    const transactional = await get<{ data: Obj[]; total: number }>('/emails?stream=transactional&page_size=100');
    expect(transactional.body.total).toBe(all.body.total - broadcastIds.size);
    expect(transactional.body.data.every((e) => e.stream === 'transactional')).toBe(true);

    const page = await get<{ data: Obj[]; total: number }>('/emails?stream=broadcast&page_size=2&page=2');
    expect(page.body.total).toBe(broadcastIds.size);
    expect(page.body.data).toHaveLength(Math.min(2, broadcastIds.size - 2));

    // The management API's list of the account's emails filters the same way.
    const adminListed = await call<{ data: Obj[]; total: number }>(
      'GET',
      `${stack.admin}/accounts/${stack.accountId}/emails?stream=broadcast&page_size=100`,
      { token: ADMIN_TOKEN },
    );
    expect(adminListed.body.total).toBe(broadcastIds.size);
    expect(new Set(adminListed.body.data.map((e) => e.id))).toEqual(broadcastIds);

    const bad: JsonResponse = await get('/emails?stream=bulk');
    expectValidationError(bad, 'unknown stream', /^stream must be one of transactional, broadcast; got "bulk"$/);
  });
});

describe('health per stream', () => {
  it('the management API shows the health window’s figures of each stream beside the whole', async () => {
    // Every email this file sent is handed over (each has its send event) before the figures are read.
    const account = await eventually(async () => {
      const res = await call('GET', `${stack.admin}/accounts/${stack.accountId}`, { token: ADMIN_TOKEN });
      const streams = res.body.streams as { stream: string; sent: number }[] | undefined;
      const broadcast = streams?.find((s) => s.stream === 'broadcast');
      return broadcast && broadcast.sent >= broadcastIds.size ? res.body : undefined;
    }, 20_000);
    const streams = account.streams as { stream: string; sent: number; bounce_rate: number; complaint_rate: number }[];
    expect(streams.map((s) => s.stream)).toEqual(['transactional', 'broadcast']);
    expect(streams[1]).toEqual({ stream: 'broadcast', sent: broadcastIds.size, bounce_rate: 0, complaint_rate: 0 });
    expect(streams[0]!.sent).toBeGreaterThan(0);
    expect(account).toMatchObject({ bounce_rate: 0, complaint_rate: 0 });
  });

  it('the management API counts each stream apart in the daily stats (?stream=), and refuses an unknown one', async () => {
    type Day = { day: string; accepted: number; sent: number; unsubscribed: number };
    const stats = (query: string) =>
      call<{ days: Day[] }>('GET', `${stack.admin}/accounts/${stack.accountId}/stats?days=1${query}`, {
        token: ADMIN_TOKEN,
      });
    const today = async (query: string) => {
      const res = await stats(query);
      expect(res.status, res.text).toBe(200);
      expect(res.body.days).toHaveLength(1);
      return res.body.days[0]!;
    };
    const [all, broadcast, transactional] = await Promise.all([
      today(''),
      today('&stream=broadcast'),
      today('&stream=transactional'),
    ]);
    // This file's broadcast emails were all accepted today and each handed over once (the health test waited).
    expect(broadcast.accepted).toBe(broadcastIds.size);
    expect(broadcast.sent).toBe(broadcastIds.size);
    expect(broadcast.sent + transactional.sent).toBe(all.sent);
    expect(broadcast.unsubscribed + transactional.unsubscribed).toBe(all.unsubscribed);
    expectValidationError(
      await stats('&stream=bulk'),
      'unknown stream',
      /^stream must be one of transactional, broadcast, or empty for all mail; got "bulk"$/,
    );
  });
});
