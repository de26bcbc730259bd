import { invalid } from '../errors.js';
import type { TemplateRefInput, TemplateStamp } from './entities/templates.js';
import { describeAddressProblem, readMailbox, type Mailbox } from './address.js';
import { formatBytes, LIMITS } from './limits.js';
import { checkBroadcastRecipients, checkStream, type StreamFields } from './streams.js';

/**
 * A send request as the use cases see it. The generated proto message has exactly this shape, so both
 * adapters pass theirs straight through; nothing here knows about the wire. domain/ may not import the
 * generated type, so test/unit/email-draft-fields.test.ts fails when the two differ in a field.
 */
export interface AttachmentInput {
  filename: string;
  /** Base64 (standard or URL-safe alphabet; line breaks allowed), as the spec's JSON carries it. */
  content: string;
  contentType: string;
  /** Empty or absent: an ordinary attachment; else the inline part's Content-ID, without angle brackets. */
  contentId?: string;
}

/** An attachment once checked: its content decoded. */
export interface Attachment {
  filename: string;
  content: Buffer;
  contentType: string;
  /** Empty, or the Content-ID (no angle brackets) that makes it an inline part the html refers to as cid:. */
  contentId: string;
}

/** The address fields of an email, each entry one address: as given (text) or as parsed (a Mailbox). */
export interface AddressFields<Entry> {
  from: Entry;
  to: Entry[];
  cc: Entry[];
  bcc: Entry[];
  replyTo: Entry[];
}

export interface EmailDraft extends AddressFields<string> {
  subject: string;
  html: string;
  text: string;
  attachments: AttachmentInput[];
  headers: Record<string, string>;
  tags: Record<string, string>;
  /** Instead of subject, html and text: a template, rendered at acceptance (services/draft-preparer.ts). */
  template?: TemplateRefInput | undefined;
  /** `transactional` or `broadcast`; empty: transactional (domain/streams.ts). */
  stream: string;
  /** A broadcast email's topic; empty: none. */
  topic: string;
}

/** Every address field of an email, one mailbox per entry, as parsed at acceptance. */
export type Mailboxes = AddressFields<Mailbox>;

/**
 * A send request once checked: every address field parsed into mailboxes (one per entry), which is what is
 * stored and what the message and its SMTP envelope are built from.
 */
export interface ValidDraft
  extends Omit<EmailDraft, keyof Mailboxes | 'attachments' | 'template' | keyof StreamFields>, Mailboxes, StreamFields {
  /** The template the subject and bodies were rendered from; absent when the send gave its own. */
  template?: TemplateStamp;
  /** The From address's domain, in lower case: the domain the sender rules judge. */
  senderDomain: string;
  attachments: Attachment[];
  /** Everything the caller gave (addresses, subject, bodies, headers, decoded attachments), in bytes. */
  size: number;
}

/**
 * Headers the service writes itself. Letting a caller set them would forge the envelope, break threading
 * or the MIME structure; a caller who wants a Reply-To has the reply_to field.
 */
const RESERVED_HEADERS = new Set([
  'from',
  'to',
  'cc',
  'bcc',
  'reply-to',
  'sender',
  'subject',
  'date',
  'message-id',
  'mime-version',
  'content-type',
  'content-transfer-encoding',
  'content-disposition',
  'return-path',
  'received',
  'dkim-signature',
  'x-mail-email-id',
  'x-mail-report-token',
]);
// RFC 5322 field-name: printable ASCII except colon.
const HEADER_NAME = /^[\x21-\x39\x3b-\x7e]+$/;
const TAG_KEY = /^[A-Za-z0-9_-]+$/;
// Control characters other than tab break a header line or hide content.
const CONTROL = /[\0-\x08\x0a-\x1f\x7f]/;
// A filename ends up in a MIME parameter: no control characters, no path.
const BAD_FILENAME = /[\0-\x1f\x7f/\\]/;
// A Content-ID goes between angle brackets in a header and after "cid:" in a URL: printable, no brackets, no space.
const CONTENT_ID = /^[\x21-\x3b\x3d\x3f-\x7e]+$/;
const MEDIA_TYPE = /^[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*\/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*(\s*;.*)?$/;

const bytes = (s: string) => Buffer.byteLength(s, 'utf8');

const BASE64 = /^[A-Za-z0-9+/_-]*={0,2}$/;

/** Strict base64: Buffer.from alone would skip any character it does not know and decode garbage. */
function decodeBase64(field: string, text: string): Buffer {
  const compact = /[\r\n\t ]/.test(text) ? text.replace(/[\r\n\t ]/g, '') : text;
  if (!BASE64.test(compact) || compact.length % 4 === 1) throw invalid(`${field}: not valid base64`);
  return Buffer.from(compact, 'base64');
}

function tooLong(field: string, length: number, max: number, unit: string): never {
  throw invalid(`${field}: length ${length} exceeds the maximum of ${max} ${unit}`);
}

/** One mailbox from one entry; a list or a group in one entry is refused, naming the entry. */
function mailbox(field: string, value: string): Mailbox & { domain: string } {
  const read = readMailbox(value);
  if (typeof read === 'string') throw invalid(`${field}: "${printable(value)}" ${describeAddressProblem(read)}`);
  return read;
}

const mailboxes = (field: string, list: string[]): Mailbox[] =>
  list.map((value, i) => {
    const { name, address } = mailbox(`${field}[${i}]`, value);
    return { name, address };
  });

const mailboxBytes = (list: Mailbox[]) => list.reduce((n, m) => n + bytes(m.name) + bytes(m.address), 0);

function printable(s: string): string {
  const shown = s.length > 80 ? `${s.slice(0, 80)}…` : s;
  return shown.replace(/[\0-\x1f\x7f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
}

type FieldName = (name: string) => string;

/** The address fields, one mailbox per entry, and the sender's domain. */
function checkMailboxes(draft: EmailDraft, f: FieldName): Mailboxes & { senderDomain: string } {
  if (draft.from === '') throw invalid(`${f('from')} is required`);
  const sender = mailbox(f('from'), draft.from);
  const from: Mailbox = { name: sender.name, address: sender.address };

  if (draft.to.length === 0) throw invalid(`${f('to')} is required: give at least one recipient`);
  const to = mailboxes(f('to'), draft.to);
  const cc = mailboxes(f('cc'), draft.cc);
  const bcc = mailboxes(f('bcc'), draft.bcc);
  if (draft.replyTo.length > LIMITS.replyTo) {
    throw invalid(`${f('reply_to')}: ${draft.replyTo.length} addresses exceed the maximum of ${LIMITS.replyTo}`);
  }
  const replyTo = mailboxes(f('reply_to'), draft.replyTo);
  // Each entry is exactly one mailbox, so this counts the envelope's recipients.
  const recipients = to.length + cc.length + bcc.length;
  if (recipients > LIMITS.recipients) {
    throw invalid(
      `${f('to')} + ${f('cc')} + ${f('bcc')}: ${recipients} recipients exceed the maximum of ${LIMITS.recipients}`,
    );
  }
  return { from, to, cc, bcc, replyTo, senderDomain: sender.domain };
}

/** Subject, html and text; answers their size in bytes. */
function checkSubjectAndBodies(draft: EmailDraft, f: FieldName): number {
  if (draft.subject === '') throw invalid(`${f('subject')} is required`);
  const subjectChars = [...draft.subject].length;
  if (subjectChars > LIMITS.subjectChars) tooLong(f('subject'), subjectChars, LIMITS.subjectChars, 'characters');
  if (/[\r\n\0]/.test(draft.subject)) throw invalid(`${f('subject')} must not contain line breaks`);

  if (draft.html === '' && draft.text === '')
    throw invalid(`${f('html')} or ${f('text')} is required: give at least one`);
  const htmlBytes = bytes(draft.html);
  if (htmlBytes > LIMITS.htmlBytes)
    tooLong(f('html'), htmlBytes, LIMITS.htmlBytes, `bytes (${formatBytes(LIMITS.htmlBytes)})`);
  const textBytes = bytes(draft.text);
  if (textBytes > LIMITS.textBytes)
    tooLong(f('text'), textBytes, LIMITS.textBytes, `bytes (${formatBytes(LIMITS.textBytes)})`);
  return bytes(draft.subject) + htmlBytes + textBytes;
}

/** Custom headers; answers their size in bytes as header lines (name, ": ", value, CRLF). */
function checkHeaders(headers: Record<string, string>, field: string): number {
  const headerNames = Object.keys(headers);
  if (headerNames.length > LIMITS.customHeaders) {
    throw invalid(`${field}: ${headerNames.length} headers exceed the maximum of ${LIMITS.customHeaders}`);
  }
  let headerBytes = 0;
  for (const [name, value] of Object.entries(headers)) {
    const named = `${field}.${printable(name)}`;
    if (!HEADER_NAME.test(name)) throw invalid(`${named}: not a valid header name`);
    if (name.length > LIMITS.headerNameChars) tooLong(named, name.length, LIMITS.headerNameChars, 'characters');
    if (RESERVED_HEADERS.has(name.toLowerCase()))
      throw invalid(`${named}: this header is set by the service and cannot be given`);
    if (CONTROL.test(value))
      throw invalid(`${named}: header values must not contain line breaks or control characters`);
    if (value.length > LIMITS.headerValueChars) tooLong(named, value.length, LIMITS.headerValueChars, 'characters');
    headerBytes += bytes(name) + bytes(value) + 4;
  }
  return headerBytes;
}

function checkTags(tags: Record<string, string>, field: string): void {
  const tagKeys = Object.keys(tags);
  if (tagKeys.length > LIMITS.tags)
    throw invalid(`${field}: ${tagKeys.length} tags exceed the maximum of ${LIMITS.tags}`);
  for (const [key, value] of Object.entries(tags)) {
    const named = `${field}.${printable(key)}`;
    if (!TAG_KEY.test(key)) throw invalid(`${named}: tag names may contain only letters, digits, "_" and "-"`);
    if (key.length > LIMITS.tagKeyChars) tooLong(named, key.length, LIMITS.tagKeyChars, 'characters');
    if (value.length > LIMITS.tagValueChars)
      tooLong(`${named} value`, value.length, LIMITS.tagValueChars, 'characters');
    if (CONTROL.test(value)) throw invalid(`${named}: tag values must not contain control characters`);
  }
}

/** One attachment, its content decoded. */
function checkAttachment(a: AttachmentInput, field: string): Attachment {
  if (a.filename === '') throw invalid(`${field}.filename is required`);
  if (a.filename.length > LIMITS.filenameChars)
    tooLong(`${field}.filename`, a.filename.length, LIMITS.filenameChars, 'characters');
  if (BAD_FILENAME.test(a.filename))
    throw invalid(`${field}.filename must not contain control characters or path separators`);
  if (a.content === '') throw invalid(`${field}.content is required (base64)`);
  // Decoded size can be told from the text's length before decoding anything.
  if (a.content.length > Math.ceil((LIMITS.attachmentBytes * 4) / 3) + 4 + a.content.length / 38) {
    tooLong(
      `${field}.content`,
      Math.floor((a.content.length * 3) / 4),
      LIMITS.attachmentBytes,
      `bytes (${formatBytes(LIMITS.attachmentBytes)})`,
    );
  }
  const content = decodeBase64(`${field}.content`, a.content);
  if (content.length === 0) throw invalid(`${field}.content is required (base64)`);
  if (content.length > LIMITS.attachmentBytes) {
    tooLong(
      `${field}.content`,
      content.length,
      LIMITS.attachmentBytes,
      `bytes (${formatBytes(LIMITS.attachmentBytes)})`,
    );
  }
  if (a.contentType.length > LIMITS.contentTypeChars) {
    tooLong(`${field}.content_type`, a.contentType.length, LIMITS.contentTypeChars, 'characters');
  }
  if (a.contentType !== '' && (!MEDIA_TYPE.test(a.contentType) || CONTROL.test(a.contentType))) {
    throw invalid(`${field}.content_type: "${printable(a.contentType)}" is not a media type`);
  }
  const contentId = a.contentId ?? '';
  checkContentId(contentId, `${field}.content_id`);
  return { filename: a.filename, content, contentType: a.contentType, contentId };
}

/** Whether a non-empty text may be an inline part's content id (a message received over SMTP asks too). */
export const isContentId = (id: string) => id.length <= LIMITS.contentIdChars && CONTENT_ID.test(id);

/** An inline part's id (empty: not inline), written as the header's `<id>` and the html's `cid:id`. */
function checkContentId(id: string, field: string): void {
  if (id === '') return;
  if (id.length > LIMITS.contentIdChars) tooLong(field, id.length, LIMITS.contentIdChars, 'characters');
  if (!CONTENT_ID.test(id)) {
    throw invalid(
      `${field}: "${printable(id)}" may contain only printable ASCII characters other than "<", ">" and white space`,
    );
  }
}

function checkAttachments(list: AttachmentInput[], field: string): Attachment[] {
  if (list.length > LIMITS.attachments) {
    throw invalid(`${field}: ${list.length} attachments exceed the maximum of ${LIMITS.attachments}`);
  }
  const checked = list.map((a, i) => checkAttachment(a, `${field}[${i}]`));
  // cid:x must name one part: a second part with the same id would be one the html cannot show.
  const seen = new Map<string, number>();
  checked.forEach((a, i) => {
    if (a.contentId === '') return;
    const first = seen.get(a.contentId);
    if (first !== undefined)
      throw invalid(`${field}[${i}].content_id: "${a.contentId}" is already the content_id of ${field}[${first}]`);
    seen.set(a.contentId, i);
  });
  return checked;
}

const attachmentBytes = (list: Attachment[]) =>
  list.reduce((n, a) => n + a.content.length + bytes(a.filename) + bytes(a.contentType) + a.contentId.length, 0);

/**
 * Checks every rule of the spec's send request and "Limits" table; throws a 400 naming the field
 * (prefixed, e.g. `emails[3].subject`, inside a batch).
 */
export function validateDraft(draft: EmailDraft, prefix = ''): ValidDraft {
  const f: FieldName = (name) => `${prefix}${name}`;
  const streamFields = checkStream(draft, f);
  const { senderDomain, ...boxes } = checkMailboxes(draft, f);
  checkBroadcastRecipients(streamFields.stream, { to: boxes.to.length, cc: boxes.cc.length, bcc: boxes.bcc.length }, f);
  const contentBytes = checkSubjectAndBodies(draft, f);
  const headerBytes = checkHeaders(draft.headers, f('headers'));
  checkTags(draft.tags, f('tags'));
  const attachments = checkAttachments(draft.attachments, f('attachments'));

  const { from, to, cc, bcc, replyTo } = boxes;
  const size =
    mailboxBytes([from, ...to, ...cc, ...bcc, ...replyTo]) + contentBytes + headerBytes + attachmentBytes(attachments);
  if (size > LIMITS.emailBytes) {
    throw invalid(
      `${prefix === '' ? 'email' : prefix.slice(0, -1)}: total size ${size} bytes exceeds the maximum of ${LIMITS.emailBytes} bytes (${formatBytes(LIMITS.emailBytes)})`,
    );
  }
  // The template reference is the request's, not the email's: what was rendered from it is stamped by the caller.
  const { template: _request, stream: _stream, topic: _topic, ...fields } = draft;
  return { ...fields, ...boxes, ...streamFields, senderDomain, attachments, size };
}
