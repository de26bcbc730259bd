import { describe, expect, it } from 'vitest';
import { replyCandidates } from '../../src/db/index.js';
import type { InboundEmailRow } from '../../src/domain/entities/inbound.js';
import {
  INBOUND_EVENT_BODY_BYTES,
  inboundEmailJson,
  storedInboundEventData,
  withInboundBodies,
} from '../../src/domain/inbound-json.js';

const row = (over: Partial<InboundEmailRow> = {}): InboundEmailRow => ({
  id: 'in_1',
  accountId: 'acc_1',
  routeId: 'rt_1',
  receivedAt: new Date('2026-11-28T01:00:00Z'),
  envelopeFrom: 'a@x.test',
  envelopeTo: 'support+t@acme.test',
  remoteAddress: '192.0.2.1',
  mailboxHash: 't',
  rawKey: 'in_1/raw',
  rawSize: 10,
  replyToEmailId: null,
  from: 'a@x.test',
  fromName: 'A',
  to: ['support+t@acme.test'],
  cc: [],
  replyTo: [],
  subject: 'Hi',
  text: 'hello',
  html: '<p>hello</p>',
  strippedText: 'hello',
  headers: [{ name: 'Subject', value: 'Hi' }],
  messageId: '<m@x.test>',
  inReplyTo: '',
  references: [],
  attachments: [{ filename: null, contentType: 'image/png', size: 3, contentId: 'logo', key: 'in_1/0' }],
  authentication: { spf: 'pass', dkim: 'none', dmarc: 'fail' },
  ...over,
});

/** The `inbound` event as it is delivered and listed: what is stored, with the row's bodies put back. */
const inboundEventData = (r: InboundEmailRow) => withInboundBodies(storedInboundEventData(r), r);

describe('the inbound email as the API shows it', () => {
  it("has CONTRACT.md's fields, and no storage detail (keys, envelope, account)", () => {
    const json = inboundEmailJson(row());
    expect(Object.keys(json).sort()).toEqual(
      [
        'id',
        'route_id',
        'received_at',
        'from',
        'from_name',
        'to',
        'cc',
        'reply_to',
        'subject',
        'text',
        'html',
        'stripped_text',
        'headers',
        'message_id',
        'in_reply_to',
        'mailbox_hash',
        'attachments',
        'authentication',
        'reply_to_email_id',
      ].sort(),
    );
    expect(json.attachments).toEqual([{ filename: null, content_type: 'image/png', size: 3, content_id: 'logo' }]);
    expect(json.received_at).toBe('2026-11-28T01:00:00.000Z');
  });

  it('cuts text, html and stripped_text at 1 MB in the event, at a character, and says so', () => {
    const small = inboundEventData(row());
    expect(small.truncated).toBeUndefined();
    expect(small.text).toBe('hello');
    // 'é' is two bytes: the cut falls inside one, which is left out whole.
    const long = `x${'é'.repeat(INBOUND_EVENT_BODY_BYTES)}`;
    const data = inboundEventData(row({ html: long, text: 'short' }));
    expect(data.truncated).toBe(true);
    expect(data.text).toBe('short');
    const html = data.html as string;
    expect(Buffer.byteLength(html)).toBe(INBOUND_EVENT_BODY_BYTES - 1);
    expect(long.startsWith(html)).toBe(true);
    // Exactly 1 MB fits whole.
    const exact = 'y'.repeat(INBOUND_EVENT_BODY_BYTES);
    expect(inboundEventData(row({ strippedText: exact })).truncated).toBeUndefined();
  });
});

describe('an inbound event stored without its bodies', () => {
  it('keeps everything but text, html and stripped_text, and reads back as the whole event', () => {
    const r = row({ html: '<p>hi</p>', strippedText: 'hi' });
    const stored = storedInboundEventData(r);
    expect(Object.keys(stored).sort()).toEqual(
      Object.keys(inboundEmailJson(r))
        .filter((k) => !['text', 'html', 'stripped_text'].includes(k))
        .sort(),
    );
    expect(withInboundBodies(JSON.parse(JSON.stringify(stored)), r)).toEqual(inboundEventData(r));
    expect(inboundEventData(r)).toMatchObject({ text: 'hello', html: '<p>hi</p>', stripped_text: 'hi' });
  });

  it('reads data stored with its bodies (as it was until they were left out) the same, truncated as the row says', () => {
    const long = 'z'.repeat(INBOUND_EVENT_BODY_BYTES + 1);
    const old = { ...inboundEmailJson(row({ text: long })), text: 'stale', truncated: true };
    const fits = withInboundBodies(old, row());
    expect(fits).toEqual(inboundEventData(row()));
    expect(fits.truncated).toBeUndefined();
    const cut = withInboundBodies(old, row({ text: long }));
    expect(cut.truncated).toBe(true);
    expect(cut.text).toBe(long.slice(0, INBOUND_EVENT_BODY_BYTES));
  });
});

describe('the Message-IDs a reply may name', () => {
  it('In-Reply-To first, then References newest first, each in angle brackets, once', () => {
    expect(replyCandidates({ inReplyTo: '<c@x>', references: ['<c@x>', '<a@x>', 'b@x', '<c@x>'] })).toEqual([
      '<c@x>',
      '<b@x>',
      '<a@x>',
    ]);
    expect(replyCandidates({ inReplyTo: '', references: [] })).toEqual([]);
    expect(replyCandidates({ inReplyTo: ' <> ', references: [' d@x '] })).toEqual(['<d@x>']);
  });
});
