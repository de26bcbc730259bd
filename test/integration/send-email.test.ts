import { describe, expect, it } from 'vitest';
import { call, eventually, validEmail } from '../helpers/http.js';
import { useStack } from '../helpers/use-stack.js';
import { returnPathPattern } from '../helpers/return-path.js';

const stack = useStack();

/** Fields of the sent email that GET /emails/:id answers as they were sent. */
const STORED = {
  to: ['a@example.net'],
  cc: ['c@example.net'],
  bcc: ['hidden@example.net'],
  reply_to: ['reply@example.com'],
  headers: { 'X-Campaign': 'spring' },
  tags: { category: 'welcome' },
  attachments: [
    { filename: 'hello.txt', content: Buffer.from('hello file').toString('base64'), content_type: 'text/plain' },
  ],
};

describe('POST /emails delivers through SMTP', () => {
  it('answers pending with an empty message_id, then the email arrives and becomes delivered', async () => {
    const res = await call('POST', `${stack.api}/emails`, {
      token: stack.apiKey,
      body: validEmail({ ...STORED, html: '<p>Hi <b>there</b></p>' }),
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ id: expect.stringMatching(/^em_[0-9a-z]{26}$/), message_id: '', status: 'pending' });
    const id = res.body.id as string;

    // A copy per recipient (to, cc, bcc in that order), each under that recipient's own return path.
    const copies = await stack.sink.waitFor(3);
    ['a@example.net', 'c@example.net', 'hidden@example.net'].forEach((recipient, i) => {
      const copy = copies.find((m) => m.envelopeTo.join() === recipient);
      expect(copy?.envelopeFrom).toMatch(returnPathPattern(id, 'example.com', i));
    });
    expect(copies.flatMap((m) => m.envelopeTo).sort()).toEqual([
      'a@example.net',
      'c@example.net',
      'hidden@example.net',
    ]);
    const msg = copies[0];
    const p = msg!.parsed;
    expect(p.subject).toBe('Hello');
    expect(p.text?.trim()).toBe('Hello there');
    expect(p.html).toContain('<b>there</b>');
    expect(p.headers.get('x-campaign')).toBe('spring');
    expect(p.headers.has('bcc')).toBe(false);
    expect(msg!.raw.toString()).not.toMatch(/hidden@example\.net/);
    expect(p.replyTo?.text).toBe('reply@example.com');
    expect(p.attachments).toHaveLength(1);
    expect(p.attachments[0]!.filename).toBe('hello.txt');
    expect(p.attachments[0]!.content.toString()).toBe('hello file');
    expect(p.messageId).toBe(`<${id}@example.com>`);

    const detail = await eventually(async () => {
      const r = await call('GET', `${stack.api}/emails/${id}`, { token: stack.apiKey });
      return r.body.status === 'delivered' ? r : undefined;
    });
    expect(detail.body).toMatchObject({
      id,
      message_id: `<${id}@example.com>`,
      from: 'Sender <sender@example.com>',
      subject: 'Hello',
      ...STORED,
      status: 'delivered',
      mal_status: 'healthy',
      job_type: 'direct',
      job_id: '',
    });
  });
});
