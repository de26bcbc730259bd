import { describe, expect, it } from 'vitest';
import { validateDraft, type EmailDraft } from '../../src/domain/email-draft.js';
import { checkStream } from '../../src/domain/streams.js';
import { AppError } from '../../src/errors.js';

const draft = (overrides: Partial<EmailDraft> = {}): EmailDraft => ({
  from: 'sender@example.com',
  to: ['rcpt@example.net'],
  cc: [],
  bcc: [],
  replyTo: [],
  subject: 'Hello',
  html: '',
  text: 'Hi',
  attachments: [],
  headers: {},
  tags: {},
  stream: '',
  topic: '',
  ...overrides,
});

/** The 400 a draft gets, as its message. */
function refusal(d: EmailDraft, prefix = ''): string {
  try {
    validateDraft(d, prefix);
  } catch (err) {
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).kind).toBe('validation');
    return (err as AppError).message;
  }
  throw new Error('the draft was accepted');
}

describe('a send’s stream and topic', () => {
  it('is transactional without a topic when neither is given', () => {
    expect(validateDraft(draft())).toMatchObject({ stream: 'transactional', topic: null });
    expect(validateDraft(draft({ stream: 'transactional' }))).toMatchObject({ stream: 'transactional', topic: null });
  });

  it('keeps a broadcast stream and its topic', () => {
    expect(validateDraft(draft({ stream: 'broadcast' }))).toMatchObject({ stream: 'broadcast', topic: null });
    const topic = `a.B_9-${'x'.repeat(58)}`;
    expect(topic).toHaveLength(64);
    expect(validateDraft(draft({ stream: 'broadcast', topic }))).toMatchObject({ stream: 'broadcast', topic });
  });

  it('refuses another stream, naming the field', () => {
    expect(refusal(draft({ stream: 'marketing' }))).toBe(
      'stream must be one of transactional, broadcast; got "marketing"',
    );
    expect(refusal(draft({ stream: 'Broadcast' }))).toMatch(/^stream must be one of/);
  });

  it('refuses a topic without broadcast', () => {
    expect(refusal(draft({ topic: 'news' }))).toBe('topic is only allowed with stream "broadcast"');
    expect(refusal(draft({ stream: 'transactional', topic: 'news' }))).toBe(
      'topic is only allowed with stream "broadcast"',
    );
  });

  it.each([
    ['too long', 'x'.repeat(65)],
    ['a space', 'weekly news'],
    ['a slash', 'a/b'],
    ['a non-ASCII letter', 'nöws'],
    ['a line break', 'a\r\nBcc: x@y'],
  ])('refuses a topic with %s', (_what, topic) => {
    expect(refusal(draft({ stream: 'broadcast', topic }))).toMatch(
      /^topic: ".*" must be 1 to 64 of letters, digits, "\.", "_" and "-"$/s,
    );
  });

  it('gives a broadcast email exactly one recipient in to and none in cc or bcc', () => {
    const broadcast = { stream: 'broadcast' };
    expect(refusal(draft({ ...broadcast, to: ['a@example.net', 'b@example.net'] }))).toBe(
      'to: a broadcast email has exactly one recipient in to; got 2',
    );
    expect(refusal(draft({ ...broadcast, cc: ['c@example.net'] }))).toBe(
      'cc: a broadcast email has no cc recipients; got 1',
    );
    expect(refusal(draft({ ...broadcast, bcc: ['c@example.net'] }))).toBe(
      'bcc: a broadcast email has no bcc recipients; got 1',
    );
    // Transactional mail keeps every recipient field.
    expect(validateDraft(draft({ to: ['a@example.net', 'b@example.net'], cc: ['c@example.net'] })).stream).toBe(
      'transactional',
    );
  });

  it('names the batch item', () => {
    expect(refusal(draft({ stream: 'bulk' }), 'emails[3].')).toMatch(/^emails\[3\]\.stream must be one of/);
    expect(refusal(draft({ topic: 'x' }), 'emails[3].')).toBe(
      'emails[3].topic is only allowed with stream "broadcast"',
    );
    expect(refusal(draft({ stream: 'broadcast', bcc: ['c@example.net'] }), 'emails[3].')).toMatch(
      /^emails\[3\]\.bcc: /,
    );
  });

  it('checks the stream before anything else about the recipients', () => {
    expect(() => checkStream({ stream: 'broadcast', topic: '' }, (n) => n)).not.toThrow();
    expect(refusal(draft({ stream: 'nope', to: [] }))).toMatch(/^stream /);
  });
});
