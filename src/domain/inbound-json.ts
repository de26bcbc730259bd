import type { InboundEmailRow, InboundEventData } from './entities/inbound.js';
import type { WireJsonObject } from './json.js';

/**
 * The most of each body (text, html, stripped_text) an `inbound` event carries, in UTF-8 bytes: a webhook body
 * stays a size receivers take (issue 26: bodies over 1 MB are truncated, the whole read from the API).
 */
export const INBOUND_EVENT_BODY_BYTES = 1_000_000;

/** An inbound email as the API shows it (CONTRACT.md "Inbound mail": its field names and shapes). */
export function inboundEmailJson(row: InboundEmailRow): WireJsonObject & { id: string } {
  return {
    id: row.id,
    route_id: row.routeId,
    received_at: row.receivedAt.toISOString(),
    from: row.from,
    from_name: row.fromName,
    to: [...row.to],
    cc: [...row.cc],
    reply_to: [...row.replyTo],
    subject: row.subject,
    text: row.text,
    html: row.html,
    stripped_text: row.strippedText,
    headers: row.headers.map((h) => ({ name: h.name, value: h.value })),
    message_id: row.messageId,
    in_reply_to: row.inReplyTo,
    mailbox_hash: row.mailboxHash,
    attachments: row.attachments.map((a) => ({
      filename: a.filename,
      content_type: a.contentType,
      size: a.size,
      content_id: a.contentId,
    })),
    authentication: {
      spf: row.authentication.spf,
      dkim: row.authentication.dkim,
      dmarc: row.authentication.dmarc,
    },
    reply_to_email_id: row.replyToEmailId,
  };
}

/** `text` cut to at most `maxBytes` of UTF-8, at a character's end; undefined when it fits whole. */
function cut(text: string, maxBytes: number): string | undefined {
  // A character is at most 3 UTF-8 bytes per UTF-16 unit: shorter strings fit without encoding them.
  if (text.length * 3 <= maxBytes) return undefined;
  const into = new Uint8Array(maxBytes);
  const { read } = new TextEncoder().encodeInto(text, into);
  return read < text.length ? text.slice(0, read) : undefined;
}

/** What events.data holds of an `inbound` event (storedInboundEventData). */
export type StoredInboundEventData = WireJsonObject & { id: string };

/** The bodies an inbound email's row keeps, which its `inbound` event's stored data leaves out. */
export type InboundBodies = Pick<InboundEmailRow, 'text' | 'html' | 'strippedText'>;

/**
 * What `events.data` keeps of an `inbound` event: the inbound email as the API shows it without text, html and
 * stripped_text. The bodies are in the inbound email's row, which outlives its events (an inbound email goes
 * with its events, and not while a delivery of them is pending): a reader puts them back (withInboundBodies)
 * rather than every message storing, compressing and logging them twice.
 */
export function storedInboundEventData(row: InboundEmailRow): StoredInboundEventData {
  const { text: _text, html: _html, stripped_text: _stripped, ...rest } = inboundEmailJson(row);
  return rest;
}

/**
 * The `inbound` event's data as webhooks and the events API show it: the stored data with the inbound email's
 * bodies, each cut at INBOUND_EVENT_BODY_BYTES; when any was cut, `truncated: true` (the whole is at GET
 * /inbound/emails/:id). Data stored with its bodies (as events were until they left them out) reads the same.
 */
export function withInboundBodies(stored: StoredInboundEventData, bodies: InboundBodies): InboundEventData {
  const { truncated: _truncated, ...rest } = stored;
  const data: InboundEventData = { ...rest, text: bodies.text, html: bodies.html, stripped_text: bodies.strippedText };
  let truncated = false;
  for (const field of ['text', 'html', 'stripped_text'] as const) {
    const value = data[field];
    const shorter = typeof value === 'string' ? cut(value, INBOUND_EVENT_BODY_BYTES) : undefined;
    if (shorter !== undefined) {
      data[field] = shorter;
      truncated = true;
    }
  }
  if (truncated) data.truncated = true;
  return data;
}
