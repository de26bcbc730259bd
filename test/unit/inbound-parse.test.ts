import { createHash, randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import MailComposer from 'nodemailer/lib/mail-composer';
import type Mail from 'nodemailer/lib/mailer';
import { describe, expect, it } from 'vitest';
import {
  INBOUND_PARSE_LIMITS,
  parseInbound,
  type InboundAttachmentInfo,
  type ParseInboundOptions,
} from '../../src/inbound/inbound-parse.js';

const build = (mail: Mail.Options): Promise<Buffer> => new MailComposer(mail).compile().build();

/** The message's bytes in chunks of 64 KiB, counting how many were read. */
function sourceOf(raw: Buffer): Readable & { pulled: number } {
  let at = 0;
  const source = new Readable({
    read() {
      if (at >= raw.length) return void this.push(null);
      const chunk = raw.subarray(at, at + 65536);
      at += chunk.length;
      source.pulled = at;
      this.push(chunk);
    },
  }) as Readable & { pulled: number };
  source.pulled = 0;
  return source;
}

interface Saved {
  index: number;
  info: InboundAttachmentInfo;
  bytes: Buffer;
}

/** A store keeping what it is given, one attachment at a time (it records how many it was given at once). */
function memoryStore() {
  const saved: Saved[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const saveAttachment: ParseInboundOptions['saveAttachment'] = async (index, content, info) => {
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    const chunks: Buffer[] = [];
    for await (const chunk of content) chunks.push(chunk as Buffer);
    const bytes = Buffer.concat(chunks);
    saved.push({ index, info, bytes });
    inFlight--;
    return { key: `key-${index}`, size: bytes.length };
  };
  return {
    saved,
    saveAttachment,
    get maxInFlight() {
      return maxInFlight;
    },
  };
}

describe('parseInbound', () => {
  it('reads addresses, bodies, an inline image with its content id and attachments streamed to the store', async () => {
    const image = randomBytes(40_000);
    const pdf = randomBytes(300_000);
    const raw = await build({
      from: { name: 'Jürgen Müller', address: 'juergen@sender.test' },
      to: ['support@inbound.test', { name: 'Team', address: 'team@inbound.test' }],
      cc: 'copy@inbound.test',
      replyTo: 'replies@sender.test',
      subject: 'Grüße — re: your order ✓',
      messageId: '<reply-1@sender.test>',
      inReplyTo: '<original-1@mailer.test>',
      references: ['<thread-0@mailer.test>', '<original-1@mailer.test>'],
      text: 'Thanks!\n\nOn Fri, Nov 27, 2026 at 10:02 AM Support <support@inbound.test> wrote:\n> Your order shipped.\n',
      html: '<p>Thanks!</p><img src="cid:logo@sender.test">',
      attachments: [
        { filename: 'logo.png', content: image, contentType: 'image/png', cid: 'logo@sender.test' },
        { filename: 'Rechnung Nr. 7 — März.pdf', content: pdf, contentType: 'application/pdf' },
      ],
    });
    const store = memoryStore();
    const parsed = await parseInbound(sourceOf(raw), { saveAttachment: store.saveAttachment });

    expect(parsed).toMatchObject({
      from: 'juergen@sender.test',
      fromName: 'Jürgen Müller',
      to: ['support@inbound.test', 'team@inbound.test'],
      cc: ['copy@inbound.test'],
      replyTo: ['replies@sender.test'],
      subject: 'Grüße — re: your order ✓',
      text: 'Thanks!\n\nOn Fri, Nov 27, 2026 at 10:02 AM Support <support@inbound.test> wrote:\n> Your order shipped.\n',
      html: '<p>Thanks!</p><img src="cid:logo@sender.test">',
      strippedText: 'Thanks!',
      messageId: '<reply-1@sender.test>',
      inReplyTo: '<original-1@mailer.test>',
      references: ['<original-1@mailer.test>', '<thread-0@mailer.test>'],
    });
    expect(parsed.attachments).toEqual([
      {
        filename: 'logo.png',
        contentType: 'image/png',
        size: image.length,
        contentId: 'logo@sender.test',
        key: 'key-0',
      },
      {
        filename: 'Rechnung Nr. 7 — März.pdf',
        contentType: 'application/pdf',
        size: pdf.length,
        contentId: null,
        key: 'key-1',
      },
    ]);
    expect(store.saved.map((s) => [s.index, s.info.filename])).toEqual([
      [0, 'logo.png'],
      [1, 'Rechnung Nr. 7 — März.pdf'],
    ]);
    expect(store.saved[0]!.bytes.equals(image)).toBe(true);
    expect(store.saved[1]!.bytes.equals(pdf)).toBe(true);
    expect(store.maxInFlight).toBe(1);
  });

  it('keeps headers in order, names as written, values unfolded and decoded', async () => {
    const raw = Buffer.from(
      [
        'Received: from mx.sender.test (mx.sender.test [192.0.2.1])',
        '\tby mx.inbound.test; Fri, 27 Nov 2026 10:02:00 +0000',
        'From: =?UTF-8?Q?Zo=C3=AB?= <zoe@sender.test>',
        'To: support@inbound.test',
        'Subject: =?UTF-8?B?w4dh?= va',
        ' =?ISO-8859-1?Q?tr=E8s_bien?=',
        'X-Custom-HEADER: Grüße',
        'Message-ID: <m1@sender.test>',
        'References: <a@x.test>',
        ' <b@x.test> <a@x.test>',
        'In-Reply-To: <b@x.test>',
        '',
        'Hello',
        '',
      ].join('\r\n'),
    );
    const parsed = await parseInbound(sourceOf(raw), memoryStore());
    expect(parsed.headers).toEqual([
      {
        name: 'Received',
        value: 'from mx.sender.test (mx.sender.test [192.0.2.1])\tby mx.inbound.test; Fri, 27 Nov 2026 10:02:00 +0000',
      },
      { name: 'From', value: 'Zoë <zoe@sender.test>' },
      { name: 'To', value: 'support@inbound.test' },
      { name: 'Subject', value: 'Ça va très bien' },
      { name: 'X-Custom-HEADER', value: 'Grüße' },
      { name: 'Message-ID', value: '<m1@sender.test>' },
      { name: 'References', value: '<a@x.test> <b@x.test> <a@x.test>' },
      { name: 'In-Reply-To', value: '<b@x.test>' },
    ]);
    expect(parsed.subject).toBe('Ça va très bien');
    expect(parsed.fromName).toBe('Zoë');
    expect(parsed.references).toEqual(['<b@x.test>', '<a@x.test>']);
    expect(parsed.inReplyTo).toBe('<b@x.test>');
    expect(parsed.text).toBe('Hello\n');
    expect(parsed.html).toBe('');
  });

  it('keeps the first 1,000 headers, 100 references, and reads ids without brackets', async () => {
    const many = Array.from({ length: 5000 }, (_, i) => `X-Filler-${i}: ${i}`);
    const refs = Array.from({ length: 300 }, (_, i) => `<r${i}@x.test>`).join(' ');
    const raw = Buffer.from(
      ['From: a@sender.test', 'In-Reply-To: bare@x.test', `References: ${refs}`, ...many, '', 'body', ''].join('\r\n'),
    );
    const parsed = await parseInbound(sourceOf(raw), memoryStore());
    expect(parsed.headers).toHaveLength(INBOUND_PARSE_LIMITS.headers);
    expect(parsed.headers[0]).toEqual({ name: 'From', value: 'a@sender.test' });
    expect(parsed.headers.at(-1)).toEqual({ name: 'X-Filler-996', value: '996' });
    expect(parsed.inReplyTo).toBe('<bare@x.test>');
    expect(parsed.references).toHaveLength(100);
    expect(parsed.references.slice(0, 3)).toEqual(['<bare@x.test>', '<r0@x.test>', '<r1@x.test>']);
    expect(parsed.messageId).toBe('');
  });

  it("makes an HTML-only message's text from its HTML, and strips its quote", async () => {
    const raw = await build({
      from: 'a@sender.test',
      to: 'b@inbound.test',
      subject: 'html only',
      html:
        '<div dir="ltr">Sounds good.</div><br><div class="gmail_quote"><div dir="ltr" class="gmail_attr">' +
        'On Fri, Nov 27, 2026 at 10:02 AM B &lt;b@inbound.test&gt; wrote:<br></div>' +
        '<blockquote class="gmail_quote">Shall we?</blockquote></div>',
    });
    const parsed = await parseInbound(sourceOf(raw), memoryStore());
    expect(parsed.text).toBe(
      'Sounds good.\n\nOn Fri, Nov 27, 2026 at 10:02 AM B <b@inbound.test> wrote:\n\n> Shall we?',
    );
    expect(parsed.strippedText).toBe('Sounds good.');
    expect(parsed.html).toContain('gmail_quote');
  });

  it('saves at most 100 attachments and reads the rest through', async () => {
    const raw = await build({
      from: 'a@sender.test',
      to: 'b@inbound.test',
      text: 'many',
      attachments: Array.from({ length: 120 }, (_, i) => ({ filename: `f${i}.txt`, content: `file ${i}` })),
    });
    const store = memoryStore();
    const parsed = await parseInbound(sourceOf(raw), store);
    expect(parsed.attachments).toHaveLength(INBOUND_PARSE_LIMITS.attachments);
    expect(store.saved).toHaveLength(INBOUND_PARSE_LIMITS.attachments);
    expect(parsed.attachments.at(-1)).toMatchObject({ filename: 'f99.txt', size: 7, key: 'key-99' });
    expect(parsed.text).toBe('many');
  });

  it('reads the message no faster than the store takes an attachment (backpressure)', async () => {
    const big = randomBytes(16 * 1024 * 1024);
    const raw = await build({
      from: 'a@sender.test',
      to: 'b@inbound.test',
      text: 'big',
      attachments: [{ content: big, filename: false }],
    });
    const source = sourceOf(raw);
    let pulledWhileWaiting = 0;
    const parsed = await parseInbound(source, {
      async saveAttachment(_index, content) {
        const hash = createHash('sha256');
        let size = 0;
        let first = true;
        for await (const chunk of content) {
          hash.update(chunk as Buffer);
          size += (chunk as Buffer).length;
          if (first) {
            first = false;
            // A slow store: while it holds its first chunk, the parse must not run ahead through the message.
            await new Promise((resolve) => setTimeout(resolve, 100));
            pulledWhileWaiting = source.pulled;
          }
        }
        return { key: hash.digest('hex'), size };
      },
    });
    expect(pulledWhileWaiting).toBeGreaterThan(0);
    expect(pulledWhileWaiting).toBeLessThan(4 * 1024 * 1024);
    expect(source.pulled).toBe(raw.length);
    expect(parsed.attachments).toEqual([
      expect.objectContaining({
        size: big.length,
        key: createHash('sha256').update(big).digest('hex'),
        filename: null,
        contentType: 'application/octet-stream',
      }),
    ]);
  });

  it('rejects when the store fails, when the source fails, and when the message has more parts than mailparser reads', async () => {
    const raw = await build({ from: 'a@sender.test', text: 'x', attachments: [{ filename: 'a.txt', content: 'a' }] });
    await expect(
      parseInbound(sourceOf(raw), {
        saveAttachment: () => Promise.reject(new Error('disk full')),
      }),
    ).rejects.toThrow('disk full');

    // A source that fails halfway (a store read cut off): the parse rejects with its error.
    const failing = new Readable({
      read() {
        this.push(raw.subarray(0, 100));
        this.destroy(new Error('read cut off'));
      },
    });
    await expect(parseInbound(failing, memoryStore())).rejects.toThrow('read cut off');

    const parts = Array.from({ length: 1100 }, (_, i) => `--b\r\nContent-Type: text/plain\r\n\r\n${i}\r\n`).join('');
    const hostile = Buffer.from(
      `From: a@sender.test\r\nContent-Type: multipart/mixed; boundary=b\r\n\r\n${parts}--b--\r\n`,
    );
    await expect(parseInbound(sourceOf(hostile), memoryStore())).rejects.toThrow(/child nodes/);
  });
});
