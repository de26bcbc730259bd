import { simpleParser, type Attachment, type SimpleParserOptions } from 'mailparser';
import { addressKey } from '../domain/address.js';
import { bounceTypeOf } from '../domain/bounce-class.js';
import type { BounceType, BouncedRecipient } from '../domain/events.js';

/**
 * Reports mailed back to the service, read from the raw message: abuse reports in ARF (RFC 5965) become
 * complaints, delivery status notifications (RFC 3464, and RFC 6533's UTF-8 form) with a `failed` recipient
 * become bounces. Anything else (auto-replies, delay warnings, read receipts, junk) is not a report: the
 * caller accepts and ignores it, so nothing here ever answers mail with mail.
 */

/** How the report names the message it is about; either may be missing (a reporter may strip headers). */
export interface OriginalRef {
  /** The `X-Mail-Email-Id` header every outgoing message carries. */
  emailId?: string;
  /** The original `Message-ID`, with its angle brackets. */
  messageId?: string;
  /** The `X-Mail-Report-Token` header every outgoing message carries (report-token.ts), not yet verified. */
  reportToken?: string;
  /** The `Return-Path` the receiving server wrote on the copy (its envelope sender: that recipient's return path), not yet verified. */
  returnPath?: string;
}

export interface ComplaintReport {
  kind: 'complaint';
  /** RFC 5965 Feedback-Type in lower case: abuse, fraud, virus or other. */
  feedbackType: string;
  /** Original-Rcpt-To; often empty, as many feedback loops redact the complainer. */
  recipients: string[];
  originalMailFrom?: string;
  arrivalDate?: Date;
  original: OriginalRef;
}

export interface FailedRecipient extends BouncedRecipient {
  /** From the status (domain/bounce-class.ts): Permanent only when it says the address is dead (5.1.1, not 5.2.2 or 5.7.1). */
  bounceType: BounceType;
  /** Original-Recipient when it differs from Final-Recipient (`email_address`), as after a forward. */
  originalRecipient?: string;
}

export interface BounceReport {
  kind: 'bounce';
  /** The recipients whose Action is `failed`, never empty. */
  recipients: FailedRecipient[];
  original: OriginalRef;
}

export type FeedbackReport = ComplaintReport | BounceReport;

/** The most of a report part (and of the original's header section) read: fields are small; bodies are not needed. */
const MAX_PART_BYTES = 64 * 1024;
/** Per-recipient blocks read from one DSN, and Original-Rcpt-To fields from one ARF; real ones name a handful. */
export const MAX_RECIPIENTS = 100;
/** The most of one field's (unfolded) value kept: longer ones are cut, so no field costs more than this to read. */
export const MAX_FIELD_CHARS = 2000;
/** Values kept of one field name in one block (Original-Rcpt-To repeats; nothing else should). */
const MAX_VALUES_PER_FIELD = MAX_RECIPIENTS;
const MAX_DIAGNOSTIC_CHARS = 1000;
const MAX_ADDRESS_CHARS = 320;
/** Feedback types are single words (abuse, fraud...); a longer one is none we know. */
const MAX_FEEDBACK_TYPE_CHARS = 32;
/** An RFC 5322 date with a comment fits well within this; longer is no date. */
const MAX_DATE_CHARS = 200;
/** The report token header: a token is far shorter (report-token.ts). */
const MAX_TOKEN_HEADER_CHARS = 100;

/** Feedback types that are a recipient's complaint; `not-spam` and `auth-failure` (RFC 6591) are not. */
const COMPLAINT_TYPES: ReadonlySet<string> = new Set(['abuse', 'fraud', 'virus', 'other']);
const FEEDBACK_TYPES: ReadonlySet<string> = new Set(['message/feedback-report']);
const DELIVERY_STATUS_TYPES: ReadonlySet<string> = new Set([
  'message/delivery-status',
  'message/global-delivery-status',
]);
/** Parts that carry the original message, or only its header section. */
const ORIGINAL_TYPES: ReadonlySet<string> = new Set([
  'message/rfc822',
  'message/global',
  'text/rfc822-headers',
  'message/global-headers',
]);

const PARSER_OPTIONS: SimpleParserOptions & { ignoreEmbedded: boolean } = {
  skipHtmlToText: true,
  skipTextToHtml: true,
  skipImageLinks: true,
  // By default mailparser folds message/delivery-status into the text, and parses an inline message/rfc822
  // into the text too, losing its headers. These keep both as attachments with their raw content
  // (`ignoreEmbedded` is an option of its MIME splitter, @zone-eu/mailsplit, which it passes through).
  keepDeliveryStatus: true,
  ignoreEmbedded: true,
};

/**
 * The report a received message is, if any. A multipart/report is read by its parts (the report-type
 * parameter is not always right): a message/feedback-report part makes it a complaint, a delivery-status
 * part a bounce; the part quoting the original (whole or headers only) names the email.
 */
export async function parseFeedbackReport(raw: Buffer): Promise<FeedbackReport | undefined> {
  const parsed = await simpleParser(raw, PARSER_OPTIONS);
  const contentType = parsed.headers.get('content-type') as { value?: string } | undefined;
  if (contentType?.value?.toLowerCase() !== 'multipart/report') return undefined;

  const part = (types: ReadonlySet<string>) => parsed.attachments.find((a) => types.has(a.contentType.toLowerCase()));
  const feedback = part(FEEDBACK_TYPES);
  const status = part(DELIVERY_STATUS_TYPES);
  const originalPart = part(ORIGINAL_TYPES);
  const originalHeaders = originalPart
    ? (fieldBlocks(partText(originalPart))[0] ?? new Map())
    : new Map<string, string[]>();

  if (feedback) return complaintOf(fieldBlocks(partText(feedback))[0] ?? new Map(), originalHeaders);
  if (status) return bounceOf(fieldBlocks(partText(status)), originalHeaders);
  return undefined;
}

/** Fields by lower-case name, each with its values in order (Original-Rcpt-To may repeat). */
type Fields = Map<string, string[]>;

const partText = (a: Attachment) => a.content.subarray(0, MAX_PART_BYTES).toString('utf8');
const first = (fields: Fields, name: string) => fields.get(name)?.[0];

/**
 * Blocks of `Name: value` fields separated by blank lines: the shape of a header section, of a
 * feedback report and of a DSN (per-message block, then one per recipient). Folded lines are unfolded.
 * Linear in the text: each value stops growing at MAX_FIELD_CHARS, so a field folded over thousands of
 * lines costs no more than a short one (appending to, and trimming, an ever longer string would not).
 */
function fieldBlocks(text: string): Fields[] {
  const blocks: Fields[] = [];
  let block: Fields | undefined;
  let last: string[] | undefined;
  for (const line of text.split(/\r?\n/)) {
    if (line.trim() === '') {
      block = undefined;
      last = undefined;
      continue;
    }
    if (line.startsWith(' ') || line.startsWith('\t')) {
      const i = last ? last.length - 1 : -1;
      if (last && i >= 0 && last[i]!.length < MAX_FIELD_CHARS) {
        const more = line.trim();
        if (more !== '') last[i] = (last[i] === '' ? more : `${last[i]} ${more}`).slice(0, MAX_FIELD_CHARS);
      }
      continue;
    }
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    if (!block) {
      // A DSN's per-message block, then at most MAX_RECIPIENTS others.
      if (blocks.length > MAX_RECIPIENTS) break;
      block = new Map();
      blocks.push(block);
    }
    const name = line.slice(0, colon).trim().toLowerCase();
    const values = block.get(name) ?? [];
    block.set(name, values);
    // Further values of a field repeated beyond reason are dropped, and so are the lines folded into them.
    last = values.length < MAX_VALUES_PER_FIELD ? values : undefined;
    last?.push(
      line
        .slice(colon + 1, colon + 1 + MAX_FIELD_CHARS + 1)
        .trim()
        .slice(0, MAX_FIELD_CHARS),
    );
  }
  return blocks;
}

/**
 * An address from a report field: `rfc822; user@example.net`, `utf-8; jos\x{E9}@example.net` (RFC 6533
 * escapes its non-ASCII characters in this form), `<user@example.net>` or bare; undefined if it is none.
 */
function addressOf(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  // The address type, if any, is an atom before a `;` (split by hand: a regex with `\s*` around the `;`
  // and `.*` after it backtracks quadratically on a long run of spaces).
  const semicolon = value.indexOf(';');
  const type = semicolon > 0 ? value.slice(0, semicolon).trim() : '';
  const typed = type !== '' && /^[A-Za-z0-9-]+$/.test(type);
  let address = (typed ? value.slice(semicolon + 1) : value).trim();
  if (address.startsWith('<') && address.endsWith('>')) address = address.slice(1, -1).trim();
  if (address.length > MAX_ADDRESS_CHARS * 10) return undefined;
  if (typed && type.toLowerCase() === 'utf-8') {
    address = address.replace(/\\x\{([0-9A-Fa-f]{1,6})\}/g, (_, hex: string) =>
      String.fromCodePoint(Math.min(parseInt(hex, 16), 0x10ffff)),
    );
  }
  // The address key (canonical domain, lower case): the form the delivery path records recipients and
  // suppressions in, whichever form of the domain (Unicode or ASCII) the reporting server wrote.
  return address.length <= MAX_ADDRESS_CHARS && /^[^\s@<>]+@[^\s@<>]+$/.test(address) ? addressKey(address) : undefined;
}

/** A Message-ID with its angle brackets, the form emails.header_message_id keeps. */
function messageIdOf(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  return /<[^<>\s]{1,996}>/.exec(value)?.[0] ?? (/^[^<>\s]{1,996}$/.test(value) ? `<${value}>` : undefined);
}

function originalRef(headers: Fields, reportFields: Fields): OriginalRef {
  const emailId = first(headers, 'x-mail-email-id')?.slice(0, 64);
  const reportToken = first(headers, 'x-mail-report-token')?.slice(0, MAX_TOKEN_HEADER_CHARS);
  // The included headers first; else the id some reporters copy into the report itself (Gmail's DSNs
  // carry X-Original-Message-ID).
  const messageId =
    messageIdOf(first(headers, 'message-id')) ??
    messageIdOf(first(reportFields, 'original-message-id') ?? first(reportFields, 'x-original-message-id'));
  const returnPath = addressOf(first(headers, 'return-path'));
  return {
    ...(emailId ? { emailId } : {}),
    ...(messageId ? { messageId } : {}),
    ...(reportToken ? { reportToken } : {}),
    ...(returnPath ? { returnPath } : {}),
  };
}

/**
 * An RFC 5322 date, without the trailing comment some add (`... +0000 (UTC)`). The comment is found by
 * hand: the obvious regex, `/\s*\([^)]*\)\s*$/`, tries every `(` to the end of the value, quadratic in
 * a value made of `(`s.
 */
function dateOf(value: string | undefined): Date | undefined {
  if (value === undefined || value.length > MAX_DATE_CHARS) return undefined;
  let date = value.trimEnd();
  if (date.endsWith(')')) {
    const open = date.lastIndexOf('(');
    if (open >= 0 && date.indexOf(')', open) === date.length - 1) date = date.slice(0, open).trimEnd();
  }
  const t = Date.parse(date);
  return Number.isNaN(t) ? undefined : new Date(t);
}

function complaintOf(fields: Fields, originalHeaders: Fields): ComplaintReport | undefined {
  const feedbackType = (first(fields, 'feedback-type') ?? '')
    .slice(0, MAX_FEEDBACK_TYPE_CHARS)
    .split(/[\s;(]/)[0]!
    .toLowerCase();
  if (!COMPLAINT_TYPES.has(feedbackType)) return undefined;
  const rcptTo = (fields.get('original-rcpt-to') ?? []).slice(0, MAX_RECIPIENTS);
  const recipients = [...new Set(rcptTo.map(addressOf).filter((a): a is string => a !== undefined))];
  const originalMailFrom = addressOf(first(fields, 'original-mail-from'));
  // Received-Date is the name the ARF drafts before RFC 5965 used.
  const arrivalDate = dateOf(first(fields, 'arrival-date') ?? first(fields, 'received-date'));
  return {
    kind: 'complaint',
    feedbackType,
    recipients,
    ...(originalMailFrom ? { originalMailFrom } : {}),
    ...(arrivalDate ? { arrivalDate } : {}),
    original: originalRef(originalHeaders, fields),
  };
}

/** A diagnostic without its type (`smtp; 550 ...` is `550 ...`). */
function withoutType(value: string): string {
  const semicolon = value.indexOf(';');
  return semicolon > 0 && /^[A-Za-z0-9-]+\s*$/.test(value.slice(0, semicolon))
    ? value.slice(semicolon + 1).trimStart()
    : value;
}

/** RFC 3463 status of a failure: class, subject and detail, e.g. 5.1.1 (a comment may follow). */
const STATUS = /\b([45])\.(\d{1,3})\.(\d{1,3})\b/;

function bounceOf(blocks: Fields[], originalHeaders: Fields): BounceReport | undefined {
  const isRecipient = (b: Fields) => b.has('final-recipient') || b.has('original-recipient');
  const perMessage = blocks.find((b) => !isRecipient(b)) ?? new Map<string, string[]>();
  const recipients: FailedRecipient[] = [];
  for (const block of blocks.filter(isRecipient)) {
    // delayed, delivered, relayed and expanded are news, not failures.
    if ((first(block, 'action') ?? '').slice(0, 20).split(/[\s(]/)[0]!.toLowerCase() !== 'failed') continue;
    const finalRecipient = addressOf(first(block, 'final-recipient'));
    const originalRecipient = addressOf(first(block, 'original-recipient'));
    const address = finalRecipient ?? originalRecipient;
    if (!address) continue;
    const diagnostic = withoutType(first(block, 'diagnostic-code') ?? '').slice(0, MAX_DIAGNOSTIC_CHARS);
    // `failed` means the reporter gave up: without a usable status it is permanent (5.0.0).
    const code = STATUS.exec((first(block, 'status') ?? '').slice(0, 100)) ?? STATUS.exec(diagnostic);
    const status = code ? `${code[1]}.${code[2]}.${code[3]}` : '5.0.0';
    recipients.push({
      email_address: address,
      status,
      diagnostic_code: diagnostic,
      bounceType: bounceTypeOf(status, diagnostic),
      ...(originalRecipient && originalRecipient !== address ? { originalRecipient } : {}),
    });
  }
  if (recipients.length === 0) return undefined;
  return { kind: 'bounce', recipients, original: originalRef(originalHeaders, perMessage) };
}
