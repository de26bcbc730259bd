import { PassThrough, Readable } from 'node:stream';
import MailComposer from 'nodemailer/lib/mail-composer';
import type Mail from 'nodemailer/lib/mailer';
import { describe, expect, it } from 'vitest';
import { buildAtOnce, endingInNewline } from '../../src/delivery/message/render-message.js';

/** The same message twice: a fixed date, Message-ID and boundary make the two trees' bytes comparable. */
const compiled = (mail: Mail.Options) => {
  const options = {
    date: new Date('2026-11-29T10:00:00Z'),
    messageId: '<m1@example.com>',
    baseBoundary: 'b0',
    ...mail,
  };
  return [new MailComposer(options).compile(), new MailComposer(options).compile()] as const;
};

const base: Mail.Options = {
  from: 'Acme <news@acme.test>',
  to: ['jane@example.com', 'Jöhn Dœ <john@example.org>'],
  cc: 'ops@example.net',
  replyTo: 'support@acme.test',
  subject: 'Your order',
  headers: { 'List-Unsubscribe': '<https://acme.test/u/1>', 'X-Entity-Ref-ID': 'r-1' },
};
const longLine = `${'word '.repeat(40)}end`;
const nonAscii = 'Grüße aus Köln — ünïcödé ✓ 日本語のテキスト';

const cases: Record<string, Mail.Options> = {
  'text and html, ASCII': { ...base, text: 'Hello Jane,\r\nyour order shipped.\r\n', html: '<p>Hello <b>Jane</b></p>' },
  'non-ASCII subject, names and bodies': {
    ...base,
    subject: `Bestellung ✓ ${nonAscii}`,
    text: `${nonAscii}\n${nonAscii}\n`,
    html: `<p>${nonAscii}</p>`,
  },
  'long lines, trailing white space, tabs, lone CR and LF, no final line break': {
    ...base,
    text: `${longLine}\r\ntrailing   \r\n\ttab\there \t\nlone\rcr\nend  `,
    html: `<div>${longLine}${longLine}</div>  \n  `,
  },
  'html only': { ...base, html: '<p>only html</p>' },
  'text only, and an empty html': { ...base, text: 'only text', html: '' },
  'mostly non-ASCII text (base64)': { ...base, text: '日本語のテキスト'.repeat(30) },
  'a body over the encoder slice (64 KiB)': { ...base, text: `${nonAscii} ${longLine}\n`.repeat(900) },
  'attachments from buffers and strings, an inline image': {
    ...base,
    text: 'See attached.',
    html: '<p>See <img src="cid:logo@acme"></p>',
    attachments: [
      { filename: 'report.pdf', content: Buffer.from(Array.from({ length: 3000 }, (_, i) => i % 256)) },
      { filename: 'notes.txt', content: `${nonAscii}\r\nline two` },
      { filename: 'plain.txt', content: 'ascii only\r\n' },
      { filename: 'logo.png', content: Buffer.from('89504e470d0a1a0a', 'hex'), cid: 'logo@acme' },
      { filename: 'data.bin', content: Buffer.from('a\rb\nc\r\n', 'latin1'), contentType: 'application/octet-stream' },
      {
        filename: 'data.qp',
        content: Buffer.from('lone\rcr, lone\nlf, crlf\r\n', 'latin1'),
        contentType: 'application/octet-stream',
        contentTransferEncoding: 'quoted-printable',
      },
    ],
  },
  'alternatives and a text calendar': {
    ...base,
    text: 'plain',
    html: '<p>html</p>',
    alternatives: [{ contentType: 'text/x-web-markdown', content: '**md**' }],
    icalEvent: { method: 'REQUEST', content: 'BEGIN:VCALENDAR\r\nEND:VCALENDAR\r\n' },
  },
};

describe('buildAtOnce (the message built in one synchronous pass)', () => {
  for (const [name, mail] of Object.entries(cases)) {
    it(`writes the bytes MimeNode's stream writes: ${name}`, async () => {
      const [once, streamed] = compiled(mail);
      const expected = await streamed.build();
      const built = buildAtOnce(once);
      expect(built).toBeDefined();
      expect(endingInNewline(built!).toString('latin1')).toBe(expected.toString('latin1'));
    });
  }

  it('leaves to the stream what it cannot build at once: raw nodes, file, URL and stream content, transforms', () => {
    expect(buildAtOnce(compiled({ ...base, raw: 'Subject: raw\r\n\r\nraw\r\n' })[0])).toBeUndefined();
    expect(buildAtOnce(compiled({ ...base, text: 'x', attachments: [{ path: '/etc/hostname' }] })[0])).toBeUndefined();
    expect(
      buildAtOnce(compiled({ ...base, text: 'x', attachments: [{ href: 'https://a.test/x' }] })[0]),
    ).toBeUndefined();
    expect(buildAtOnce(compiled({ ...base, text: Readable.from(['streamed']) })[0])).toBeUndefined();
    const [transformed] = compiled({ ...base, text: 'x' });
    transformed.transform(new PassThrough());
    expect(buildAtOnce(transformed)).toBeUndefined();
  });
});
