import { simpleParser } from 'mailparser';
import { describe, expect, it } from 'vitest';
import { validateDraft } from '../../src/domain/email-draft.js';
import { LIMITS } from '../../src/domain/limits.js';
import type { AppError } from '../../src/errors.js';
import { draftFromMessage } from '../../src/services/submission-draft.js';

const parse = (lines: string[]) =>
  simpleParser(Buffer.from(lines.join('\r\n')), {
    skipHtmlToText: true,
    skipTextToHtml: true,
    skipTextLinks: true,
    skipImageLinks: true,
  });

const HEAD = [
  'From: "Doe, \\"Jo\\"" <jo@example.com>',
  'To: Ann <ann@example.net>, Out <out@example.net>',
  'Cc: cc@example.net',
  'Subject: Hi',
];

describe('a submitted message as the send request POST /emails takes', () => {
  it('lets the envelope decide who receives: To and Cc as named, every other envelope recipient a Bcc', async () => {
    const parsed = await parse([...HEAD, '', 'body']);
    const draft = draftFromMessage(parsed, ['ANN@example.net', 'cc@example.net', 'hidden@example.net']);
    expect(draft).toMatchObject({
      to: ['"Ann" <ann@example.net>'],
      cc: ['cc@example.net'],
      bcc: ['hidden@example.net'],
    });
    // The quoted display name reads back as the one mailbox it was.
    const valid = validateDraft(draft);
    expect(valid.from).toEqual({ name: 'Doe, "Jo"', address: 'jo@example.com' });
    expect(valid.to).toEqual([{ name: 'Ann', address: 'ann@example.net' }]);
  });

  it('refuses a message whose To names none of the envelope recipients', async () => {
    const parsed = await parse([...HEAD, '', 'body']);
    expect(() => draftFromMessage(parsed, ['hidden@example.net'])).toThrow(
      /To header names none of the RCPT TO recipients/,
    );
  });

  it('keeps the headers the API takes, unfolded, and drops transport, signature and MIME ones', async () => {
    const parsed = await parse([
      ...HEAD,
      'Message-ID: <x@client>',
      'Received: from a by b',
      'DKIM-Signature: v=1; d=x',
      'MIME-Version: 1.0',
      'Resent-From: r@x',
      'X-Long: one',
      ' two',
      'In-Reply-To: <y@client>',
      '',
      'body',
    ]);
    expect(draftFromMessage(parsed, ['ann@example.net']).headers).toEqual({
      'X-Long': 'one two',
      'In-Reply-To': '<y@client>',
    });
  });

  it('takes X-Mail-Stream and X-Mail-Topic as the stream and topic, and does not send them on', async () => {
    const parsed = await parse([
      'From: jo@example.com',
      'To: ann@example.net',
      'Subject: News',
      'X-Mail-Stream: broadcast',
      'X-Mail-Topic: weekly',
      'X-Kept: yes',
      '',
      'body',
    ]);
    const draft = draftFromMessage(parsed, ['ann@example.net']);
    expect(draft).toMatchObject({ stream: 'broadcast', topic: 'weekly', headers: { 'X-Kept': 'yes' } });
    expect(Object.keys(draft.headers)).toEqual(['X-Kept']);
    expect(validateDraft(draft)).toMatchObject({ stream: 'broadcast', topic: 'weekly' });
    // Without them the message is transactional.
    const plain = draftFromMessage(await parse([...HEAD, '', 'body']), ['ann@example.net']);
    expect(validateDraft(plain)).toMatchObject({ stream: 'transactional', topic: null });
  });

  it('keeps text, html and attachments (a nameless one named attachment-<n>)', async () => {
    const parsed = await parse([
      ...HEAD,
      'Content-Type: multipart/mixed; boundary=b',
      '',
      '--b',
      'Content-Type: multipart/alternative; boundary=a',
      '',
      '--a',
      'Content-Type: text/plain',
      '',
      'plain',
      '--a',
      'Content-Type: text/html',
      '',
      '<p>html</p>',
      '--a--',
      '--b',
      'Content-Type: application/octet-stream',
      'Content-Transfer-Encoding: base64',
      '',
      Buffer.from('bytes').toString('base64'),
      '--b--',
      '',
    ]);
    const draft = draftFromMessage(parsed, ['ann@example.net']);
    expect(draft.text.trim()).toBe('plain');
    expect(draft.html.trim()).toBe('<p>html</p>');
    expect(draft.attachments).toEqual([
      {
        filename: 'attachment-1',
        contentType: 'application/octet-stream',
        content: Buffer.from('bytes').toString('base64'),
        contentId: '',
      },
    ]);
  });

  it("keeps an inline part's Content-ID as its content_id; a Content-ID taken or one the API refuses leaves a part an attachment", async () => {
    const image = (cid: string, disposition: string) => [
      'Content-Type: image/png',
      `Content-ID: ${cid}`,
      `Content-Disposition: ${disposition}`,
      'Content-Transfer-Encoding: base64',
      '',
      Buffer.from('png').toString('base64'),
    ];
    const parsed = await parse([
      ...HEAD,
      'Content-Type: multipart/mixed; boundary=m',
      '',
      '--m',
      'Content-Type: multipart/related; boundary=r',
      '',
      '--r',
      'Content-Type: text/html',
      '',
      '<img src="cid:logo@x"><img src="cid:dup">',
      '--r',
      ...image('<logo@x>', 'inline; filename=logo.png'),
      '--r',
      ...image('<dup>', 'attachment; filename=one.png'),
      '--r',
      ...image('<dup>', 'inline; filename=two.png'),
      '--r--',
      '--m',
      ...image('<has space>', 'inline; filename=bad.png'),
      '--m',
      ...image('<plain>', 'attachment; filename=plain.png'),
      '--m--',
      '',
    ]);
    const draft = draftFromMessage(parsed, ['ann@example.net']);
    expect(draft.attachments.map((a) => [a.filename, a.contentId])).toEqual([
      ['logo.png', 'logo@x'],
      ['one.png', 'dup'],
      ['two.png', ''],
      ['bad.png', ''],
      ['plain.png', ''],
    ]);
    expect(validateDraft(draft).attachments.map((a) => a.contentId)).toEqual(['logo@x', 'dup', '', '', '']);
  });

  it("answers content over the API's limits as too large (552), not as invalid", async () => {
    const big = 'x'.repeat(LIMITS.textBytes + 1);
    const parsed = await parse([...HEAD, '', big]);
    let err: AppError | undefined;
    try {
      draftFromMessage(parsed, ['ann@example.net']);
    } catch (e) {
      err = e as AppError;
    }
    expect(err?.kind).toBe('payload_too_large');
  });
});
