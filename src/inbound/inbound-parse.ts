import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import libmime from 'libmime';
import {
  MailParser,
  type AddressObject,
  type AttachmentStream,
  type EmailAddress,
  type HeaderLines,
  type Headers,
  type MailParserOptions,
  type MessageText,
} from 'mailparser';
import type { InboundAttachmentRow, InboundHeader, ParsedInbound } from '../domain/entities/inbound.js';
import { htmlText } from './html-text.js';
import { strippedText } from './stripped-text.js';

/** What a hostile message can make the parse keep (docs/inbound.md, "What a message becomes"). */
export const INBOUND_PARSE_LIMITS = {
  /** Header fields kept in `headers`, the first ones; the rest are dropped (Message-ID and the like are still read). */
  headers: 1000,
  /** Attachments saved, the first ones; the parts beyond are read through and not stored nor listed. */
  attachments: 100,
  /** Message-IDs kept in `references`. */
  references: 100,
  /** Characters of `text` and of `html` kept; beyond, cut (a 25 MiB message holds less, but a charset may grow it). */
  bodyChars: 25 * 1024 * 1024,
  /** The header block of one MIME part (mailparser's splitter; more is an error: the message is not parsed). */
  headBytes: 1024 * 1024,
  /** MIME parts in all (mailparser's splitter; more is an error). */
  parts: 1000,
} as const;

export interface InboundAttachmentInfo {
  filename: string | null;
  contentType: string;
  /** Without angle brackets. */
  contentId: string | null;
}

export interface ParseInboundOptions {
  /**
   * Stores attachment `index` (from 0, its place in `attachments`): reads `content` to its end and answers the
   * key it is stored under and its size in bytes. Called for one attachment at a time, in order; the parse waits
   * for it (backpressure: the message is read no faster than the store takes the bytes).
   */
  saveAttachment(index: number, content: Readable, info: InboundAttachmentInfo): Promise<{ key: string; size: number }>;
}

export type ParsedInboundMessage = Omit<ParsedInbound, 'authentication'>;

/**
 * Parses an inbound message as it is read from `source` (mailparser's streaming MailParser, not simpleParser,
 * which would hold every attachment in memory): attachments go to `saveAttachment` as streams, one after
 * another. Rejects when `source` fails, when `saveAttachment` rejects, or when the message is beyond what
 * mailparser reads (a part's header block over 1 MiB, more than 1,000 parts).
 */
export async function parseInbound(source: Readable, options: ParseInboundOptions): Promise<ParsedInboundMessage> {
  const config: MailParserOptions & { maxHeadSize: number; maxChildNodes: number } = {
    // The text of an HTML-only message is made here (html-text.ts), not by mailparser's html-to-text: see there.
    skipHtmlToText: true,
    // textAsHtml and its link detection are not used: no work for them.
    skipTextToHtml: true,
    skipTextLinks: true,
    skipImageLinks: true,
    maxHeadSize: INBOUND_PARSE_LIMITS.headBytes,
    maxChildNodes: INBOUND_PARSE_LIMITS.parts,
  };
  const parser = new MailParser(config);
  let headerLines: HeaderLines = [];
  let headers: Headers = new Map();
  // Emitted for the message's own header first; only that one is wanted (parts have their own).
  parser.once('headerLines', (lines: HeaderLines) => (headerLines = lines));
  parser.once('headers', (h: Headers) => (headers = h));

  const attachments: InboundAttachmentRow[] = [];
  let body: MessageText | undefined;
  const piping = pipeline(source, parser);
  try {
    for await (const data of parser as AsyncIterable<AttachmentStream | MessageText>) {
      if (data.type === 'text') {
        body = data;
        continue;
      }
      const content = data.content as Readable;
      if (attachments.length >= INBOUND_PARSE_LIMITS.attachments) {
        // Read through and dropped: mailparser goes on once the part is consumed and released.
        content.resume();
        data.release();
        continue;
      }
      const info: InboundAttachmentInfo = {
        filename: data.filename || null,
        contentType: data.contentType,
        contentId: data.cid || null,
      };
      const saved = await options.saveAttachment(attachments.length, content, info);
      data.release();
      attachments.push({ ...info, size: saved.size, key: saved.key });
    }
    await piping;
  } catch (err) {
    // Leaving the loop destroyed the parser; the pipeline's own rejection (premature close) is that same end.
    piping.catch(() => undefined);
    throw err;
  }

  const fields = headerLines.map(headerField);
  const firstValue = (name: string) => fields.find((f) => f.name.toLowerCase() === name)?.value ?? '';
  const messageIds = (name: string) => idsOf(firstValue(name));
  const inReplyTo = messageIds('in-reply-to');
  const from = addressesOf(headers.get('from'))[0];
  const html = cut(typeof body?.html === 'string' ? body.html : '');
  const plain = cut(body?.text ?? '');
  // With no plain text part (or only empty ones), the text is the HTML's.
  const text = plain.trim() === '' && html !== '' ? cut(htmlText(html)) : plain;

  return {
    from: from?.address ?? '',
    fromName: from?.name ?? '',
    to: addressesOf(headers.get('to')).map((a) => a.address),
    cc: addressesOf(headers.get('cc')).map((a) => a.address),
    replyTo: addressesOf(headers.get('reply-to')).map((a) => a.address),
    subject: typeof headers.get('subject') === 'string' ? (headers.get('subject') as string) : '',
    text,
    html,
    strippedText: strippedText(text),
    headers: fields.slice(0, INBOUND_PARSE_LIMITS.headers).map(decodeField),
    messageId: messageIds('message-id')[0] ?? '',
    inReplyTo: inReplyTo[0] ?? '',
    references: [...new Set([...inReplyTo, ...messageIds('references')])].slice(0, INBOUND_PARSE_LIMITS.references),
    attachments,
  };
}

const cut = (s: string) => (s.length > INBOUND_PARSE_LIMITS.bodyChars ? s.slice(0, INBOUND_PARSE_LIMITS.bodyChars) : s);

/**
 * A raw header line as mailsplit gives it (bytes as a binary string, folded): its name as written and its
 * value unfolded, as UTF-8 (what 8-bit headers are in practice, RFC 6532), not yet decoded.
 */
function headerField(line: { key: string; line: string }): InboundHeader {
  const text = Buffer.from(line.line, 'binary').toString('utf8');
  const colon = text.indexOf(':');
  const name = (colon < 0 ? text : text.slice(0, colon)).trim();
  // Unfolding (RFC 5322 2.2.3): a line break followed by whitespace is the whitespace.
  const value = colon < 0 ? '' : text.slice(colon + 1).replace(/\r?\n(?=[ \t])/g, '');
  return { name, value: value.trim() };
}

/** A header's value with its RFC 2047 encoded words decoded; as written when they do not decode. */
function decodeField(field: InboundHeader): InboundHeader {
  if (!field.value.includes('=?')) return field;
  try {
    return { name: field.name, value: libmime.decodeWords(field.value) };
  } catch {
    return field;
  }
}

/** The Message-IDs of a header value, each `<...>`: the bracketed ones, or bare `local@domain` words. */
function idsOf(value: string): string[] {
  const bracketed = value.match(/<[^<>\s]+>/g);
  if (bracketed) return bracketed;
  return value.split(/\s+/).flatMap((word) => (/^[^<>@\s]+@[^<>@\s]+$/.test(word) ? [`<${word}>`] : []));
}

/** The addresses of an address header (every one when the header is repeated), groups flattened, empty ones left out. */
function addressesOf(value: unknown): { address: string; name: string }[] {
  const objects = (Array.isArray(value) ? value : value ? [value] : []) as AddressObject[];
  const out: { address: string; name: string }[] = [];
  const walk = (list: EmailAddress[]) => {
    for (const a of list) {
      if (a.group) walk(a.group);
      else if (a.address) out.push({ address: a.address, name: a.name ?? '' });
    }
  };
  for (const o of objects) walk(o.value ?? []);
  return out;
}
