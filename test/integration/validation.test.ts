import crypto from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { call, eventually, validEmail, type JsonResponse } from '../helpers/http.js';
import type { SinkMessage } from '../helpers/smtp-sink.js';
import { ADMIN_TOKEN } from '../helpers/stack.js';
import { useStack } from '../helpers/use-stack.js';

const MiB = 1024 * 1024;

const stack = useStack({ MAILER_RATE_LIMIT: '10000' });
beforeAll(async () => {
  // This file fires many requests in a row with one key; the rate limit has its own test file.
});

const send = (body: unknown) => call('POST', `${stack.api}/emails`, { token: stack.apiKey, body });
const sendRaw = (rawBody: string, headers: Record<string, string> = {}) =>
  call('POST', `${stack.api}/emails`, { token: stack.apiKey, rawBody, headers });
const b64 = (bytes: number) => Buffer.alloc(bytes, 0x61).toString('base64');
const attachment = (bytes: number, i = 0) => ({
  filename: `file${i}.bin`,
  content: b64(bytes),
  content_type: 'application/octet-stream',
});
const addresses = (n: number, tag: string) => Array.from({ length: n }, (_, i) => `${tag}${i}@example.net`);

/** A 400 in the spec's shape whose message contains every one of `parts`. */
function expect400(res: JsonResponse, ...parts: (string | number)[]): void {
  expect(res.status, res.text.slice(0, 300)).toBe(400);
  expect(Object.keys(res.body).sort()).toEqual(['error', 'message']);
  expect(res.body.error).toBe('validation error');
  for (const p of parts) expect(res.body.message).toContain(String(p));
}

/** Waits for the email `id` at the sink (its Message-ID is `<id@domain>`). */
async function arrived(id: string): Promise<SinkMessage> {
  return eventually(async () => stack.sink.messages.find((m) => m.messageId.startsWith(`<${id}@`)));
}

describe('limits of the spec: 400 naming the field, its length and the maximum', () => {
  it('subject of 999 characters', async () => {
    expect400(await send(validEmail({ subject: 's'.repeat(999) })), 'subject', '999', '998');
  });

  it('subject counts characters, not bytes or UTF-16 units (999 astral characters are refused)', async () => {
    expect400(await send(validEmail({ subject: '😀'.repeat(999) })), 'subject', '999', '998');
  });

  it('html over 5 MB', async () => {
    expect400(await send(validEmail({ html: 'x'.repeat(5 * MiB + 1) })), 'html', 5 * MiB + 1, 5 * MiB);
  });

  it('text over 5 MB', async () => {
    expect400(await send(validEmail({ text: 'x'.repeat(5 * MiB + 1) })), 'text', 5 * MiB + 1, 5 * MiB);
  });

  it('text over 5 MB counted in bytes (multi-byte characters)', async () => {
    // 2,000,000 characters of 3 bytes each: under 5 M characters, over 5 MiB.
    expect400(await send(validEmail({ text: '€'.repeat(2_000_000) })), 'text', 6_000_000, 5 * MiB);
  });

  it('11 attachments', async () => {
    const attachments = Array.from({ length: 11 }, (_, i) => attachment(10, i));
    expect400(await send(validEmail({ attachments })), 'attachments', '11', '10');
  });

  it('one attachment over 10 MB', async () => {
    expect400(
      await send(validEmail({ attachments: [attachment(10 * MiB + 1)] })),
      'attachments[0]',
      10 * MiB + 1,
      10 * MiB,
    );
  });

  it('total size over 10 MB with every part within its own limit', async () => {
    const res = await send(
      validEmail({ attachments: [attachment(4 * MiB, 0), attachment(4 * MiB, 1)], html: 'h'.repeat(3 * MiB) }),
    );
    expect400(res, 'total size', 10 * MiB);
    expect(res.body.message).toMatch(/total size (\d+) bytes/);
    expect(Number(/total size (\d+) bytes/.exec(res.body.message as string)![1])).toBeGreaterThan(11 * MiB);
  });

  it('total size counts the custom headers too', async () => {
    // Attachment + text is just under 10 MiB; 50 headers of 2,000 characters push it over.
    const headers = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`X-Pad-${i}`, 'p'.repeat(2000)]));
    const ok = await send(validEmail({ text: 't', attachments: [attachment(10 * MiB - 50_000)] }));
    expect(ok.status).toBe(200);
    expect400(
      await send(validEmail({ text: 't', attachments: [attachment(10 * MiB - 50_000)], headers })),
      'total size',
      10 * MiB,
    );
  });

  it('51 custom headers', async () => {
    const headers = Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`X-Custom-${i}`, 'v']));
    expect400(await send(validEmail({ headers })), 'headers', '51', '50');
  });

  it('51 recipients across to + cc + bcc', async () => {
    const res = await send(validEmail({ to: addresses(20, 'to'), cc: addresses(20, 'cc'), bcc: addresses(11, 'bcc') }));
    expect400(res, 'to', 'cc', 'bcc', '51', '50');
  });

  it('51 recipients in to alone', async () => {
    expect400(await send(validEmail({ to: addresses(51, 'to') })), 'to', '51', '50');
  });
});

describe('required fields and their forms', () => {
  it.each(['from', 'to', 'subject'])('missing %s', async (field) => {
    const body: Record<string, unknown> = validEmail();
    delete body[field];
    expect400(await send(body), field, 'required');
  });

  it('empty to list', async () => {
    expect400(await send(validEmail({ to: [] })), 'to', 'required');
  });

  it('neither html nor text', async () => {
    const { text: _text, ...body } = validEmail();
    expect400(await send(body), 'html', 'text');
    expect400(await send({ ...body, html: '', text: '' }), 'html', 'text');
  });

  it.each([
    ['from', { from: 'not-an-address' }, 'from'],
    ['from with two @', { from: 'a@b@example.com' }, 'from'],
    ['from without a domain dot', { from: 'sender@localhost' }, 'from'],
    ['to', { to: ['ok@example.net', 'bad'] }, 'to[1]'],
    ['cc', { cc: ['a@'] }, 'cc[0]'],
    ['bcc', { bcc: ['@example.net'] }, 'bcc[0]'],
    ['reply_to', { reply_to: ['two words@example.com'] }, 'reply_to[0]'],
    ['to with a stray bracket', { to: ['a>b@example.net'] }, 'to[0]'],
  ])('invalid address in %s', async (_name, override, field) => {
    expect400(await send(validEmail(override)), field, 'not a valid email address');
  });

  it.each([
    ['to as a string', { to: 'rcpt@example.net' }, 'to'],
    ['subject as a number', { subject: 42 }, 'subject'],
    ['html as a boolean', { html: true }, 'html'],
    ['cc with a number in it', { cc: [1] }, 'cc'],
    ['headers as an array', { headers: ['X-A: b'] }, 'headers'],
    ['a header value as a number', { headers: { 'X-Num': 1 } }, 'headers'],
    ['tags as a string', { tags: 'welcome' }, 'tags'],
    ['attachments as an object', { attachments: { filename: 'a' } }, 'attachments'],
    [
      'attachment content not base64',
      { attachments: [{ filename: 'a.txt', content: '***', content_type: 'text/plain' }] },
      'content',
    ],
    [
      'attachment filename as a number',
      { attachments: [{ filename: 7, content: 'aGk=', content_type: 'text/plain' }] },
      'filename',
    ],
  ])('wrong JSON type: %s', async (_name, override, field) => {
    expect400(await send(validEmail(override)), field);
  });

  it('an unknown field is refused, naming it', async () => {
    expect400(await send(validEmail({ sender_name: 'x' })), 'sender_name', 'unknown');
  });

  it('an unknown field inside an attachment is refused', async () => {
    expect400(
      await send(
        validEmail({ attachments: [{ filename: 'a.txt', content: 'aGk=', content_type: 'text/plain', size: 2 }] }),
      ),
      'size',
    );
  });

  it('attachment without content or filename', async () => {
    expect400(
      await send(validEmail({ attachments: [{ filename: 'a.txt', content_type: 'text/plain' }] })),
      'attachments[0].content',
    );
    expect400(
      await send(validEmail({ attachments: [{ content: 'aGk=', content_type: 'text/plain' }] })),
      'attachments[0].filename',
    );
  });

  it('attachment filename with a path is refused', async () => {
    expect400(
      await send(
        validEmail({ attachments: [{ filename: '../etc/passwd', content: 'aGk=', content_type: 'text/plain' }] }),
      ),
      'attachments[0].filename',
    );
  });
});

describe('request bodies that are not a JSON object', () => {
  it.each([
    ['malformed JSON', '{"from": "a@example.com",'],
    ['an empty body', ''],
    ['whitespace only', '   '],
    ['a JSON array', JSON.stringify([validEmail()])],
    ['JSON null', 'null'],
    ['a JSON string', '"hello"'],
    ['a JSON number', '42'],
  ])('%s is 400 in the spec shape', async (_name, raw) => {
    const res = await sendRaw(raw);
    expect400(res);
    expect(typeof res.body.message).toBe('string');
    expect((res.body.message as string).length).toBeGreaterThan(0);
  });

  it('a valid JSON body without a Content-Type header is read as JSON', async () => {
    const res = await call('POST', `${stack.api}/emails`, {
      token: stack.apiKey,
      rawBody: JSON.stringify(validEmail()),
      headers: { 'content-type': 'text/plain' },
    });
    expect(res.status).toBe(200);
    expect(res.body.status).toBe('pending');
  });

  it('malformed JSON on the management API is also 400 in the spec shape', async () => {
    const res = await call('POST', `${stack.admin}/accounts`, { token: ADMIN_TOKEN, rawBody: '{"name":' });
    expect400(res);
  });

  it('a body over the route limit of POST /emails (32 MiB) is 413 in the spec shape, never 500', async () => {
    const raw = JSON.stringify(validEmail({ text: 'x'.repeat(33 * MiB) }));
    const res = await sendRaw(raw);
    expect(res.status).toBe(413);
    expect(res.body).toEqual({ error: 'payload too large', message: expect.stringContaining(String(32 * MiB)) });
  });

  it('a body over the 1 MiB limit of a management route is 413 in the spec shape', async () => {
    const res = await call('POST', `${stack.admin}/accounts`, {
      token: ADMIN_TOKEN,
      body: { name: 'n'.repeat(2 * MiB) },
    });
    expect(res.status).toBe(413);
    expect(res.body).toEqual({ error: 'payload too large', message: expect.stringContaining(String(MiB)) });
  });

  it('the service still answers after refusing large bodies', async () => {
    expect((await send(validEmail())).status).toBe(200);
  });
});

describe('no header injection', () => {
  it('refuses CR/LF in header values, header names, subject and addresses, and nothing reaches the mail server', async () => {
    const injected = 'victim@evil.example';
    const attempts = [
      validEmail({ subject: 'inj-1', headers: { 'X-Test': `a\r\nBcc: ${injected}` } }),
      validEmail({ subject: 'inj-2', headers: { 'X-Test': `a\nBcc: ${injected}` } }),
      validEmail({ subject: 'inj-3', headers: { 'X-Test': `a\rBcc: ${injected}` } }),
      validEmail({ subject: 'inj-4', headers: { [`X-A\r\nBcc: ${injected}\r\nX-B`]: 'v' } }),
      validEmail({ subject: `inj-5\r\nBcc: ${injected}` }),
      validEmail({ subject: 'inj-6', from: `"Evil\r\nBcc: ${injected}" <sender@example.com>` }),
      validEmail({ subject: 'inj-7', to: [`rcpt@example.net\r\nBcc: ${injected}`] }),
      validEmail({ subject: 'inj-8', reply_to: [`r@example.com\nBcc: ${injected}`] }),
      validEmail({
        subject: 'inj-9',
        attachments: [{ filename: `a.txt\r\nBcc: ${injected}`, content: 'aGk=', content_type: 'text/plain' }],
      }),
      validEmail({
        subject: 'inj-10',
        attachments: [{ filename: 'a.txt', content: 'aGk=', content_type: `text/plain\r\nBcc: ${injected}` }],
      }),
    ];
    for (const body of attempts) {
      const res = await send(body);
      expect400(res);
    }
    // A control email sent afterwards arrives: had any attempt been accepted, it would have been queued before it.
    const control = await send(validEmail({ subject: 'after-injection-attempts' }));
    expect(control.status).toBe(200);
    await arrived(control.body.id as string);
    for (const m of stack.sink.messages) {
      expect(m.envelopeTo).not.toContain(injected);
      expect(m.raw.toString('latin1')).not.toContain(injected);
      expect(m.parsed.subject ?? '').not.toMatch(/^inj-/);
    }
    const list = await call<{ data: { subject: string }[] }>('GET', `${stack.api}/emails?page_size=100`, {
      token: stack.apiKey,
    });
    expect(list.body.data.filter((e) => e.subject.startsWith('inj-'))).toEqual([]);
  });

  it.each([
    'From',
    'bcc',
    'To',
    'Subject',
    'Message-ID',
    'Content-Type',
    'Reply-To',
    'Sender',
    'Return-Path',
    'MIME-Version',
  ])('refuses the reserved header %s in headers', async (name) => {
    expect400(await send(validEmail({ headers: { [name]: 'someone@evil.example' } })), 'headers', name);
  });

  it('refuses a header name that is not a valid field name', async () => {
    expect400(await send(validEmail({ headers: { 'X Bad': 'v' } })), 'headers');
    expect400(await send(validEmail({ headers: { 'X:Bad': 'v' } })), 'headers');
  });
});

describe('GET /emails query parameters', () => {
  const list = (query: string) => call('GET', `${stack.api}/emails?${query}`, { token: stack.apiKey });

  it('page_size over 100 is 400 naming the parameter and the maximum', async () => {
    expect400(await list('page_size=101'), 'page_size', '101', '100');
  });

  it('page_size of exactly 100 is accepted', async () => {
    expect((await list('page_size=100')).status).toBe(200);
  });

  it.each([
    ['status=queued', 'status'],
    ['status=SENT', 'status'],
    ['job_type=cron', 'job_type'],
    ['page=-1', 'page'],
    ['page_size=-5', 'page_size'],
    ['page_size=ten', 'page_size'],
    ['page=1.5', 'page'],
  ])('%s is 400', async (query, field) => {
    expect400(await list(query), field);
  });

  it.each([
    'status=pending',
    'status=sent',
    'status=delivered',
    'status=bounced',
    'status=complained',
    'job_type=direct',
    'job_type=scheduled',
    'job_type=batch',
  ])('%s is accepted', async (query) => {
    const res = await list(query);
    expect(res.status).toBe(200);
    expect(typeof res.body.total).toBe('number');
  });
});

describe('boundary values that pass', () => {
  it('a subject of exactly 998 characters arrives intact', async () => {
    const subject = `${'é'.repeat(500)}${'s'.repeat(498)}`;
    expect([...subject].length).toBe(998);
    const res = await send(validEmail({ subject }));
    expect(res.status).toBe(200);
    const msg = await arrived(res.body.id as string);
    expect(msg.parsed.subject).toBe(subject);
  });

  it('exactly 50 recipients across to + cc + bcc all receive it', async () => {
    const to = addresses(20, 'to50-');
    const cc = addresses(20, 'cc50-');
    const bcc = addresses(10, 'bcc50-');
    const res = await send(validEmail({ to, cc, bcc }));
    expect(res.status).toBe(200);
    await eventually(async () => {
      const got = stack.sink.messages
        .filter((m) => m.messageId.startsWith(`<${res.body.id as string}@`))
        .flatMap((m) => m.envelopeTo);
      return got.length === 50 ? got : undefined;
    }).then((got) => expect(got.sort()).toEqual([...to, ...cc, ...bcc].sort()));
  });

  it('exactly 50 custom headers all arrive', async () => {
    const headers = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`X-Custom-${i}`, `value-${i}`]));
    const res = await send(validEmail({ headers }));
    expect(res.status).toBe(200);
    const msg = await arrived(res.body.id as string);
    for (let i = 0; i < 50; i++) expect(msg.parsed.headers.get(`x-custom-${i}`)).toBe(`value-${i}`);
  });

  it('exactly 10 attachments all arrive', async () => {
    const attachments = Array.from({ length: 10 }, (_, i) => ({
      filename: `f${i}.txt`,
      content: Buffer.from(`content ${i}`).toString('base64'),
      content_type: 'text/plain',
    }));
    const res = await send(validEmail({ attachments }));
    expect(res.status).toBe(200);
    const msg = await arrived(res.body.id as string);
    expect(msg.parsed.attachments.map((a) => a.filename)).toEqual(attachments.map((a) => a.filename));
    expect(msg.parsed.attachments.map((a) => a.content.toString())).toEqual(attachments.map((_, i) => `content ${i}`));
  });

  it('html of exactly 5 MB is accepted', async () => {
    const res = await send(validEmail({ text: '', html: 'h'.repeat(5 * MiB) }));
    expect(res.status).toBe(200);
    expect(res.body.status).toBe('pending');
  });

  it('binary attachment content is stored byte for byte', async () => {
    const content = crypto.randomBytes(MiB).toString('base64');
    const res = await send(
      validEmail({ attachments: [{ filename: 'random.bin', content, content_type: 'application/octet-stream' }] }),
    );
    expect(res.status).toBe(200);
    const detail = await call<{ attachments: { content: string }[] }>(
      'GET',
      `${stack.api}/emails/${res.body.id as string}`,
      { token: stack.apiKey },
    );
    expect(detail.body.attachments[0]!.content).toBe(content);
  });
});
