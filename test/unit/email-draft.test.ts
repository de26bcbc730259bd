import { describe, expect, it } from 'vitest';
import { validateDraft, type EmailDraft } from '../../src/domain/email-draft.js';
import { LIMITS } from '../../src/domain/limits.js';
import { AppError } from '../../src/errors.js';

const MiB = 1024 * 1024;

const draft = (overrides: Partial<EmailDraft> = {}): EmailDraft => ({
  from: 'Sender <sender@example.com>',
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

/** n zero bytes, base64-encoded as a caller sends them. */
const bytes = (n: number) => Buffer.alloc(n).toString('base64');
const file = (n: number, i = 0) => ({
  filename: `f${i}.bin`,
  content: bytes(n),
  contentType: 'application/octet-stream',
});
/** The bytes the minimal draft's addresses count in the total (name and address of each mailbox). */
const ADDRESS_BYTES = 'Sender'.length + 'sender@example.com'.length + 'rcpt@example.net'.length;
/** What an attachment of `file` counts besides its content: its filename and media type. */
const fileOverhead = (i = 0) => `f${i}.bin`.length + 'application/octet-stream'.length;
const many = (n: number, tag: string) => Array.from({ length: n }, (_, i) => `${tag}${i}@example.net`);

/** The validation error validateDraft throws for `d`. */
function refusal(d: EmailDraft, prefix?: string): AppError {
  try {
    validateDraft(d, prefix);
  } catch (err) {
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).kind).toBe('validation');
    expect((err as AppError).status).toBe(400);
    return err as AppError;
  }
  throw new Error('expected validateDraft to refuse the draft');
}

describe('validateDraft accepts', () => {
  it('a minimal draft, answering the parsed sender and the size', () => {
    const v = validateDraft(draft());
    expect(v.from).toEqual({ name: 'Sender', address: 'sender@example.com' });
    expect(v.senderDomain).toBe('example.com');
    expect(v.to).toEqual([{ name: '', address: 'rcpt@example.net' }]);
    expect(v.size).toBe(ADDRESS_BYTES + 'Hello'.length + 'Hi'.length);
  });

  it('html only, text only, both', () => {
    expect(() => validateDraft(draft({ html: '<p>x</p>', text: '' }))).not.toThrow();
    expect(() => validateDraft(draft({ html: '', text: 'x' }))).not.toThrow();
    expect(() => validateDraft(draft({ html: '<p>x</p>', text: 'x' }))).not.toThrow();
  });

  it('every limit at its exact value', () => {
    expect(() => validateDraft(draft({ subject: 's'.repeat(998) }))).not.toThrow();
    expect(() => validateDraft(draft({ subject: '😀'.repeat(998) }))).not.toThrow();
    expect(() => validateDraft(draft({ to: many(20, 't'), cc: many(20, 'c'), bcc: many(10, 'b') }))).not.toThrow();
    expect(() =>
      validateDraft(draft({ headers: Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`X-H${i}`, 'v'])) })),
    ).not.toThrow();
    expect(() => validateDraft(draft({ attachments: Array.from({ length: 10 }, (_, i) => file(1, i)) }))).not.toThrow();
    expect(() => validateDraft(draft({ html: 'h'.repeat(5 * MiB), text: '' }))).not.toThrow();
    expect(() => validateDraft(draft({ text: 't'.repeat(5 * MiB) }))).not.toThrow();
  });

  it('a total size of exactly 10 MiB', () => {
    const v = validateDraft(
      draft({ subject: 's', text: 't', attachments: [file(10 * MiB - 2 - ADDRESS_BYTES - fileOverhead())] }),
    );
    expect(v.size).toBe(10 * MiB);
  });

  it('an attachment with no content type (the default is applied later)', () => {
    expect(() =>
      validateDraft(draft({ attachments: [{ filename: 'a', content: bytes(1), contentType: '' }] })),
    ).not.toThrow();
  });

  it('tabs in header values (folding whitespace is not a line break)', () => {
    expect(() => validateDraft(draft({ headers: { 'X-Tab': 'a\tb' } }))).not.toThrow();
  });
});

describe("an attachment's content_id (an inline part)", () => {
  const inline = (contentId: string, i = 0) => ({ ...file(1, i), contentId });

  it('is kept as given, and empty or absent is an ordinary attachment', () => {
    const v = validateDraft(
      draft({
        attachments: [
          inline('logo'),
          inline('', 1),
          file(1, 2),
          inline(`a.b-c_d@e!#$%&'*+/=?^\`{|}~"[]:;,${'x'.repeat(200)}`, 3),
        ],
      }),
    );
    expect(v.attachments.map((a) => a.contentId)).toEqual(['logo', '', '', expect.stringMatching(/^a\.b-c_d@e/)]);
    expect(() => validateDraft(draft({ attachments: [inline('x'.repeat(255))] }))).not.toThrow();
  });

  it.each([
    ['with angle brackets', '<logo>', 'attachments[0].content_id: "<logo>" may contain only printable ASCII'],
    ['with a space', 'my logo', 'attachments[0].content_id: "my logo" may contain only'],
    ['with a line break', 'a\r\nBcc: x@y.z', 'attachments[0].content_id: "a\\x0d\\x0aBcc: x@y.z" may contain only'],
    ['not ASCII', 'lögo', 'attachments[0].content_id'],
    ['too long', 'x'.repeat(256), 'attachments[0].content_id: length 256 exceeds the maximum of 255 characters'],
  ])('is refused %s', (_name, id, message) => {
    expect(refusal(draft({ attachments: [inline(id)] })).message).toContain(message);
  });

  it('is refused when two attachments share it, naming the second', () => {
    const message = refusal(draft({ attachments: [inline('logo'), inline('logo', 1)] }), 'emails[2].').message;
    expect(message).toBe(
      'emails[2].attachments[1].content_id: "logo" is already the content_id of emails[2].attachments[0]',
    );
  });
});

describe('validateDraft refuses, naming the field, its length and the maximum', () => {
  it.each([
    ['subject of 999 characters', { subject: 's'.repeat(999) }, ['subject', '999', '998']],
    ['html over 5 MiB', { html: 'h'.repeat(5 * MiB + 1) }, ['html', String(5 * MiB + 1), String(5 * MiB)]],
    ['text over 5 MiB in bytes', { text: 'é'.repeat(3 * MiB) }, ['text', String(6 * MiB), String(5 * MiB)]],
    ['51 recipients', { to: many(17, 't'), cc: many(17, 'c'), bcc: many(17, 'b') }, ['to', 'cc', 'bcc', '51', '50']],
    [
      '51 headers',
      { headers: Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`X-H${i}`, 'v'])) },
      ['headers', '51', '50'],
    ],
    ['11 attachments', { attachments: Array.from({ length: 11 }, (_, i) => file(1, i)) }, ['attachments', '11', '10']],
    [
      'an attachment over 10 MiB',
      { attachments: [file(1), file(10 * MiB + 1)] },
      ['attachments[1].content', String(10 * MiB + 1), String(10 * MiB)],
    ],
    ['a total over 10 MiB', { attachments: [file(5 * MiB), file(5 * MiB)] }, ['total size', String(10 * MiB)]],
    [
      '51 tags',
      { tags: Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`t${i}`, 'v'])) },
      ['tags', '51', '50'],
    ],
    [
      'a header value over the limit',
      { headers: { 'X-Long': 'v'.repeat(LIMITS.headerValueChars + 1) } },
      ['headers.X-Long', String(LIMITS.headerValueChars + 1)],
    ],
  ] as const)('%s', (_name, overrides, parts) => {
    const err = refusal(draft(overrides as Partial<EmailDraft>));
    for (const p of parts) expect(err.message).toContain(p);
  });

  it.each([
    ['from', { from: '' }, 'from is required'],
    ['to', { to: [] }, 'to is required'],
    ['subject', { subject: '' }, 'subject is required'],
    ['html or text', { html: '', text: '' }, 'html or text is required'],
  ] as const)('a missing %s', (_name, overrides, message) => {
    expect(refusal(draft(overrides as Partial<EmailDraft>)).message).toContain(message);
  });

  it.each([
    ['from', { from: 'nope' }, 'from'],
    ['to', { to: ['ok@example.net', 'nope'] }, 'to[1]'],
    ['cc', { cc: ['x@'] }, 'cc[0]'],
    ['bcc', { bcc: ['@x.example'] }, 'bcc[0]'],
    ['reply_to', { replyTo: ['a b@example.com'] }, 'reply_to[0]'],
  ] as const)('an invalid address in %s', (_name, overrides, field) => {
    const err = refusal(draft(overrides as Partial<EmailDraft>));
    expect(err.message).toContain(field);
    expect(err.message).toContain('not a valid email address');
  });

  it('line breaks in the subject', () => {
    expect(refusal(draft({ subject: 'a\r\nBcc: x@evil.example' })).message).toContain('subject');
    expect(refusal(draft({ subject: 'a\nb' })).message).toContain('subject');
  });

  it.each(['a\r\nBcc: x@evil.example', 'a\nb', 'a\rb', 'a\0b', 'a\x1bb'])(
    'a control character in a header value (%j)',
    (value) => {
      expect(refusal(draft({ headers: { 'X-Test': value } })).message).toContain('headers.X-Test');
    },
  );

  it('control characters are shown escaped in the message, never raw', () => {
    const err = refusal(draft({ headers: { 'X-A\r\nBcc': 'v' } }));
    expect(err.message).toContain('\\x0d\\x0a');
    expect(err.message).not.toMatch(/[\r\n]/);
  });

  it.each([
    'From',
    'to',
    'CC',
    'Bcc',
    'Reply-To',
    'Subject',
    'Date',
    'Message-ID',
    'MIME-Version',
    'Content-Type',
    'Content-Transfer-Encoding',
    'Return-Path',
    'DKIM-Signature',
  ])('the reserved header %s', (name) => {
    expect(refusal(draft({ headers: { [name]: 'x' } })).message).toContain(`headers.${name}`);
  });

  it.each(['X Space', 'X:Colon', '', 'Ünicode'])('an invalid header name %j', (name) => {
    expect(refusal(draft({ headers: { [name]: 'v' } })).message).toContain('not a valid header name');
  });

  it('tag names outside letters, digits, _ and -', () => {
    expect(refusal(draft({ tags: { 'bad key': 'v' } })).message).toContain('tags.bad key');
  });
});

describe('validateDraft refuses, naming the field, its length and the maximum', () => {
  it.each([
    ['empty filename', { filename: '', content: bytes(1), contentType: 'text/plain' }, 'attachments[0].filename'],
    [
      'path in filename',
      { filename: 'a/b.txt', content: bytes(1), contentType: 'text/plain' },
      'attachments[0].filename',
    ],
    [
      'backslash in filename',
      { filename: 'a\\b.txt', content: bytes(1), contentType: 'text/plain' },
      'attachments[0].filename',
    ],
    [
      'CRLF in filename',
      { filename: 'a\r\n.txt', content: bytes(1), contentType: 'text/plain' },
      'attachments[0].filename',
    ],
    ['empty content', { filename: 'a.txt', content: bytes(0), contentType: 'text/plain' }, 'attachments[0].content'],
    ['bad content type', { filename: 'a.txt', content: bytes(1), contentType: 'text' }, 'attachments[0].content_type'],
    [
      'CRLF in content type',
      { filename: 'a.txt', content: bytes(1), contentType: 'text/plain\r\nBcc: x@y.z' },
      'attachments[0].content_type',
    ],
  ])('an attachment with %s', (_name, a, field) => {
    expect(refusal(draft({ attachments: [a] })).message).toContain(field);
  });

  it('prefixes field names inside a batch', () => {
    expect(refusal(draft({ subject: '' }), 'emails[3].').message).toBe('emails[3].subject is required');
    expect(refusal(draft({ attachments: [file(6 * MiB), file(6 * MiB)] }), 'emails[7].').message).toMatch(
      /^emails\[7\]: total size/,
    );
  });
});

describe('attachment content is strict base64, decoded once', () => {
  const one = (content: string) =>
    draft({ attachments: [{ filename: 'a.bin', content, contentType: 'application/octet-stream' }] });

  it('decodes standard, URL-safe, unpadded and line-wrapped base64 to the same bytes', () => {
    const data = Buffer.from([0xfb, 0xff, 0x00, 0x10, 0x20, 0x3e, 0x3f]);
    const standard = data.toString('base64');
    const wrapped = `${standard.slice(0, 4)}\r\n${standard.slice(4)}`;
    for (const text of [standard, data.toString('base64url'), standard.replace(/=+$/, ''), wrapped]) {
      expect(validateDraft(one(text)).attachments[0]!.content.equals(data)).toBe(true);
    }
  });

  it.each([['*** not base64'], ['aGk=aGk='], ['a'], ['aGk=\u0000']])('refuses %j naming the field', (text) => {
    expect(refusal(one(text)).message).toBe('attachments[0].content: not valid base64');
  });

  it('counts decoded bytes against the limits, not the length of the text', () => {
    const v = validateDraft(one(Buffer.alloc(3000).toString('base64')));
    expect(v.attachments[0]!.content.length).toBe(3000);
    expect(v.size).toBe(
      ADDRESS_BYTES +
        Buffer.byteLength('Hello') +
        Buffer.byteLength('Hi') +
        'a.bin'.length +
        'application/octet-stream'.length +
        3000,
    );
  });
});
