import type { Value } from '@bufbuild/protobuf/wkt';
import type { InboundEmail } from '../../src/gen/mail/v1/inbound_pb.js';
import { clip, fields, list, table } from './format.js';

// Human renderings of inbound mail, shared by `inbound list`, `get` and `tail`.

/** A string field the API writes as a string or null (google.protobuf.Value): the string, or null. */
export const textOrNull = (v: Value | undefined): string | null =>
  v?.kind.case === 'stringValue' ? v.kind.value : null;

/** `Name <address>`, or the bare address when the From header gave no name. */
export const sender = (m: InboundEmail): string => (m.fromName ? `${m.fromName} <${m.from}>` : m.from || '(none)');

/** `spf=pass dkim=fail dmarc=none`: each check's result for the message as it arrived. */
export const authLine = (m: InboundEmail): string =>
  `spf=${m.authentication?.spf || 'none'} dkim=${m.authentication?.dkim || 'none'} dmarc=${m.authentication?.dmarc || 'none'}`;

/** An attachment's file name, or `attachment-<n>` when the message gave none (what --attachment n saves it as). */
export const attachmentName = (m: InboundEmail, n: number): string =>
  textOrNull(m.attachments[n]?.filename) ?? `attachment-${n}`;

export const INBOUND_HEADERS = ['ID', 'RECEIVED', 'FROM', 'SUBJECT', 'TAG', 'AUTHENTICATION'];

export const inboundRows = (messages: InboundEmail[]): string[][] =>
  messages.map((m) => [m.id, m.receivedAt, m.from, clip(m.subject || '(no subject)'), m.mailboxHash, authLine(m)]);

/** `2026-05-01T12:00:00.000Z  in_...  from@example.org  → to@example.com  Subject  spf=pass ...`: for `inbound tail`. */
export function inboundLine(m: InboundEmail): string {
  return [m.receivedAt, m.id, m.from || '(none)', `→ ${list(m.to)}`, m.subject || '(no subject)', authLine(m)].join(
    '  ',
  );
}

/**
 * One inbound message: its envelope and authentication, its attachments (numbered as `--attachment` takes them),
 * and its text; with a reply above quoted text, the reply alone (stripped_text) first.
 */
export function showInbound(m: InboundEmail): string {
  const replyTo = textOrNull(m.replyToEmailId);
  const parts = [
    fields([
      ['id', m.id],
      ['received_at', m.receivedAt],
      ['from', sender(m)],
      ['to', list(m.to)],
      ['cc', m.cc.length ? list(m.cc) : undefined],
      ['reply_to', m.replyTo.length ? list(m.replyTo) : undefined],
      ['subject', m.subject],
      ['route_id', m.routeId],
      ['mailbox_hash', m.mailboxHash || undefined],
      ['authentication', authLine(m)],
      ['message_id', m.messageId || '(none)'],
      ['in_reply_to', m.inReplyTo || undefined],
      ['reply_to_email_id', replyTo === null ? undefined : `${replyTo} (the email of ours it answers)`],
      ['headers', `${m.headers.length} (--json shows them)`],
      ['html', m.html ? `${Buffer.byteLength(m.html)} bytes` : undefined],
    ]),
  ];
  if (m.attachments.length) {
    parts.push(
      '',
      table(
        ['N', 'FILENAME', 'TYPE', 'SIZE', 'CONTENT-ID'],
        m.attachments.map((a, n) => [
          String(n),
          attachmentName(m, n),
          a.contentType,
          `${a.size} bytes`,
          textOrNull(a.contentId) ?? '',
        ]),
      ),
    );
  }
  const stripped = m.strippedText.trim();
  if (stripped && stripped !== m.text.trim()) parts.push('', '--- reply (stripped_text) ---', stripped);
  if (m.text) parts.push('', '--- text ---', m.text.trimEnd());
  return parts.join('\n');
}
