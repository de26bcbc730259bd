import type { WireJsonObject } from '../json.js';

/**
 * Inbound mail (CONTRACT.md "Inbound mail"): routes that claim addresses of an account's domains, and the
 * messages the inbound listener received for them (migration 29).
 */

/** A route: mail to `localPart@domain` (or any local part when `localPart` is '*') is the account's. */
export interface InboundRouteRow {
  id: string;
  accountId: string;
  /** The verified domain of the account the match is on (the match's domain itself or a parent of it). */
  domainId: string;
  /** Lower case; '*' matches every local part. */
  localPart: string;
  /** Key form: ASCII, lower case. */
  domain: string;
  createdAt: Date;
}

/** The route `*@domain` or `local@domain` as CONTRACT.md writes it. */
export const routeMatch = (r: Pick<InboundRouteRow, 'localPart' | 'domain'>): string => `${r.localPart}@${r.domain}`;

/** One header as it arrived: its name as written, its value unfolded and decoded. */
export interface InboundHeader {
  name: string;
  value: string;
}

/** An attachment's description; its bytes are stored under `key` (inbound blob store). */
export interface InboundAttachmentRow {
  filename: string | null;
  contentType: string;
  size: number;
  /** Without angle brackets; null when the part has no Content-ID. */
  contentId: string | null;
  key: string;
}

/** Each check's result: pass, fail, softfail, neutral, none, temperror, permerror, policy. */
export interface InboundAuthentication {
  spf: string;
  dkim: string;
  dmarc: string;
}

/** What parsing and authenticating a message made of it (all but what the listener and the store add). */
export interface ParsedInbound {
  from: string;
  fromName: string;
  to: string[];
  cc: string[];
  replyTo: string[];
  subject: string;
  text: string;
  html: string;
  strippedText: string;
  headers: InboundHeader[];
  /** With its angle brackets; '' when the message had none. */
  messageId: string;
  inReplyTo: string;
  /** Message-IDs of In-Reply-To and References, with angle brackets, In-Reply-To's first. */
  references: string[];
  attachments: InboundAttachmentRow[];
  authentication: InboundAuthentication;
}

/** A stored inbound email. */
export interface InboundEmailRow extends ParsedInbound {
  id: string;
  accountId: string;
  routeId: string;
  receivedAt: Date;
  envelopeFrom: string;
  envelopeTo: string;
  remoteAddress: string;
  mailboxHash: string;
  rawKey: string;
  rawSize: number;
  replyToEmailId: string | null;
}

/** The `inbound` event's data: the inbound email as the API shows it, bodies cut at 1 MB (`truncated` then). */
export type InboundEventData = WireJsonObject & { id: string; truncated?: true };

/** A recipient address a route takes: the route, and the `tag` of `local+tag@domain` ('' when none). */
export interface InboundRecipient {
  route: InboundRouteRow;
  mailboxHash: string;
}
