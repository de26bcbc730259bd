import type { AddressObject, Attachment, EmailAddress, ParsedMail } from 'mailparser';
import { addressKey } from '../domain/address.js';
import { isContentId, type AttachmentInput, type EmailDraft } from '../domain/email-draft.js';
import { formatBytes, LIMITS } from '../domain/limits.js';
import { AppError, invalid } from '../errors.js';
import { STREAM_HEADERS, streamOfMessage } from './submission-stream.js';
import { TEMPLATE_HEADERS, templateOfMessage } from './submission-template.js';

/**
 * A message received over SMTP submission as the send request POST /emails takes (EmailDraft), so that it
 * then follows exactly the API's path: its validation, sender rules, quota and storage.
 *
 * - Recipients: the envelope (RCPT TO) decides who receives. To and Cc keep the header entries that are
 *   envelope recipients (with their display names); every other envelope recipient is a Bcc. A header
 *   address that is not an envelope recipient is left out (it is not sent to). At least one envelope
 *   recipient must be named in To, as the API needs a `to`.
 * - From, Reply-To and Subject come from the headers; text and html from the MIME parts as mailparser reads
 *   them (no text is made from html); every attachment is an attachment (a missing file name becomes
 *   `attachment-<n>`). An inline one (a Content-ID, and in multipart/related or with Content-Disposition
 *   inline) keeps its Content-ID as `content_id`, so the html's `cid:` references still show it; a
 *   Content-ID the API would refuse, or one already taken by an earlier part, leaves that part an ordinary
 *   attachment rather than refusing the message.
 * - Other headers pass as the API's custom `headers` when the API would take them; the ones that describe the
 *   original transport or MIME structure are dropped (DROPPED_HEADERS), as the service writes its own.
 */

/** Headers that belong to the original's transport, signature or MIME structure: the service writes its own. */
const DROPPED_HEADERS = new Set([
  'from',
  'to',
  'cc',
  'bcc',
  'reply-to',
  'subject',
  'sender',
  'date',
  'message-id',
  'mime-version',
  'content-type',
  'content-transfer-encoding',
  'content-disposition',
  'content-id',
  'content-description',
  'return-path',
  'received',
  'received-spf',
  'dkim-signature',
  'domainkey-signature',
  'authentication-results',
  'arc-seal',
  'arc-message-signature',
  'arc-authentication-results',
  'delivered-to',
  'x-original-to',
  'x-mail-email-id',
  'x-mail-report-token',
  ...Object.values(TEMPLATE_HEADERS),
  ...Object.values(STREAM_HEADERS),
]);

const bytes = (s: string) => Buffer.byteLength(s, 'utf8');

/** Every mailbox of one or more address headers, group members included. */
function mailboxesOf(field: AddressObject | AddressObject[] | undefined): EmailAddress[] {
  const objects = field === undefined ? [] : Array.isArray(field) ? field : [field];
  return objects
    .flatMap((o) => o.value)
    .flatMap((a) => (a.group ? a.group : [a]))
    .filter((a) => (a.address ?? '') !== '');
}

/** A mailbox as the API's address text: the display name quoted, so the API reads back exactly this mailbox. */
function written(a: EmailAddress): string {
  const address = a.address ?? '';
  if (a.name === '') return address;
  return `"${a.name.replace(/[\\"]/g, (c) => `\\${c}`)}" <${address}>`;
}

/** To, cc and bcc from the headers and the envelope: see the module comment. */
function recipients(parsed: ParsedMail, rcptTo: string[]): Pick<EmailDraft, 'to' | 'cc' | 'bcc'> {
  const pending = new Map(rcptTo.map((a) => [addressKey(a), a]));
  const take = (list: EmailAddress[]) => list.filter((a) => pending.delete(addressKey(a.address ?? ''))).map(written);
  const to = take(mailboxesOf(parsed.to));
  const cc = take(mailboxesOf(parsed.cc));
  if (to.length === 0) {
    throw invalid(
      'the To header names none of the RCPT TO recipients: name at least one of them in To (the others may be Cc or Bcc)',
    );
  }
  return { to, cc, bcc: [...pending.values()] };
}

/** Custom headers the API would take, as the original wrote them (unfolded); the first of repeated ones. */
function customHeaders(parsed: ParsedMail): Record<string, string> {
  const headers: Record<string, string> = {};
  const seen = new Set<string>();
  for (const { key, line } of parsed.headerLines) {
    if (DROPPED_HEADERS.has(key) || key.startsWith('resent-') || seen.has(key)) continue;
    seen.add(key);
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).trim()] = line
      .slice(colon + 1)
      .replace(/\r?\n(?=[ \t])/g, '')
      .trim();
  }
  return headers;
}

/**
 * The API's size limits, answered as too big (552 over SMTP) rather than as invalid: a client shown a 552
 * tells its user the message is too large. The same numbers as validateDraft's.
 */
function assertFits(parsed: ParsedMail, text: string, html: string): void {
  const tooBig = (what: string, size: number, max: number) =>
    new AppError(
      'payload_too_large',
      `${what}: ${size} bytes exceed the maximum of ${max} bytes (${formatBytes(max)})`,
    );
  if (bytes(html) > LIMITS.htmlBytes) throw tooBig('html', bytes(html), LIMITS.htmlBytes);
  if (bytes(text) > LIMITS.textBytes) throw tooBig('text', bytes(text), LIMITS.textBytes);
  const big = parsed.attachments.find((a) => a.content.length > LIMITS.attachmentBytes);
  if (big) throw tooBig(`attachment ${big.filename ?? ''}`.trim(), big.content.length, LIMITS.attachmentBytes);
  const total =
    bytes(parsed.subject ?? '') +
    bytes(text) +
    bytes(html) +
    parsed.attachments.reduce((n, a) => n + a.content.length, 0);
  if (total > LIMITS.emailBytes) throw tooBig('message', total, LIMITS.emailBytes);
}

/** The parts as the API's attachments, inline ones with their content id: see the module comment. */
function attachmentsOf(parts: Attachment[]): AttachmentInput[] {
  const taken = new Set<string>();
  return parts.map((a, i) => {
    const cid = a.cid ?? '';
    const inline =
      cid !== '' && (a.related === true || a.contentDisposition === 'inline') && isContentId(cid) && !taken.has(cid);
    if (inline) taken.add(cid);
    return {
      filename: a.filename ?? `attachment-${i + 1}`,
      content: a.content.toString('base64'),
      contentType: a.contentType,
      contentId: inline ? cid : '',
    };
  });
}

/** The send request a received message stands for; `rcptTo` is the envelope's recipients. */
export function draftFromMessage(parsed: ParsedMail, rcptTo: string[]): EmailDraft {
  const text = parsed.text ?? '';
  const html = parsed.html === false ? '' : parsed.html;
  assertFits(parsed, text, html);
  const from = mailboxesOf(parsed.from).map(written).join(', ');
  const subject = parsed.subject ?? '';
  const template = templateOfMessage(parsed, { subject, text, html });
  return {
    from,
    ...recipients(parsed, rcptTo),
    replyTo: mailboxesOf(parsed.replyTo).map(written),
    // A message naming a template has no content of its own (a blank body is none).
    ...(template ? { subject: '', text: '', html: '', template } : { subject, text, html }),
    attachments: attachmentsOf(parsed.attachments),
    headers: customHeaders(parsed),
    tags: {},
    ...streamOfMessage(parsed),
  };
}
