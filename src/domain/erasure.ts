import { addressKey, type Mailbox } from './address.js';
import type { Mailboxes } from './email-draft.js';
import type { JsonObject, JsonValue } from './json.js';

/**
 * What erasing an address (GDPR) leaves in its place. Stored rows keep their shape (an email still has a
 * `to`, an event still its recipients), so every reader and the API answer as before: the address becomes
 * this one, reserved by RFC 2606 (`.invalid` never resolves), and a display name next to it is dropped.
 */
export const ERASED_ADDRESS = 'erased@erased.invalid';

/** What an erasure compares on: the address key (canonical, without regard to case), as suppressions are. */
export const erasureKey = (address: string): string => addressKey(address);

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Every occurrence of the address (any case) in `text` replaced by ERASED_ADDRESS. */
export function redactText(text: string, address: string): string {
  if (!text.toLowerCase().includes(erasureKey(address))) return text;
  return text.replace(new RegExp(escapeRegExp(address), 'gi'), ERASED_ADDRESS);
}

const isAddress = (candidate: string, address: string) => erasureKey(candidate) === erasureKey(address);

const redactMailbox = (m: Mailbox, address: string): Mailbox =>
  isAddress(m.address, address) ? { name: '', address: ERASED_ADDRESS } : m;

/** Bare address lists (to_addresses, remaining recipients, ...) with the address replaced. */
export const redactAddresses = (list: string[], address: string): string[] =>
  list.map((a) => (isAddress(a, address) ? ERASED_ADDRESS : a));

/** An email's parsed address fields with the address (and its display name) replaced. */
export function redactMailboxes(m: Mailboxes, address: string): Mailboxes {
  const each = (list: Mailbox[]) => list.map((x) => redactMailbox(x, address));
  return {
    from: redactMailbox(m.from, address),
    to: each(m.to),
    cc: each(m.cc),
    bcc: each(m.bcc),
    replyTo: each(m.replyTo),
  };
}

const isMailbox = (v: object): v is Mailbox =>
  Object.keys(v).length === 2 && typeof (v as Mailbox).name === 'string' && typeof (v as Mailbox).address === 'string';

/**
 * Any JSON value (an event's data, a scheduled draft) with every mention of the address replaced: a mailbox
 * `{name, address}` of it loses its name too; any other string has the address's occurrences replaced.
 */
export function redactJson(value: JsonObject, address: string): JsonObject;
export function redactJson(value: JsonValue, address: string): JsonValue;
export function redactJson(value: JsonValue, address: string): JsonValue {
  if (typeof value === 'string') return redactText(value, address);
  if (Array.isArray(value)) return value.map((v) => redactJson(v, address));
  if (value !== null && typeof value === 'object') {
    if (isMailbox(value) && isAddress(value.address, address)) return { name: '', address: ERASED_ADDRESS };
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [redactText(k, address), redactJson(v, address)]));
  }
  return value;
}

/** Whether the JSON value mentions the address anywhere (so that only rows that change are written). */
export const mentionsAddress = (value: unknown, address: string): boolean =>
  JSON.stringify(value ?? null)
    .toLowerCase()
    .includes(erasureKey(address));
