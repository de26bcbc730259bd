import { asciiDomain } from './domain-name.js';
import { LIMITS } from './limits.js';

/**
 * The two readings of an address that inbound mail needs (CONTRACT.md "Inbound mail"): a route's `match` as an
 * account writes it, and a recipient as an SMTP client gives it in RCPT TO, each in the key form that
 * inbound_routes stores (the local part in lower case, the domain in its ASCII form in lower case). Pure.
 */

/** RFC 5321's longest local part. */
export const LOCAL_PART_MAX = 64;
/** The match that takes every local part of its domain. */
export const WILDCARD = '*';
/** Separates a mailbox's own local part from its hash (`support+ticket-42@acme.com`). */
const HASH_SEPARATOR = '+';
/**
 * Local parts the listener reads as the service's own addresses before any route (a VERP return path `b-<token>`,
 * a one-click unsubscribe address `unsub-<token>`; delivery/message/return-path.ts and unsubscribe-token.ts, whose
 * prefixes the unit test holds these to): a route for one would never be given mail, so none is made.
 */
export const RESERVED_LOCAL_PREFIXES = ['b-', 'unsub-'] as const;
/**
 * The longest `match` read: a local part and a domain name whose ASCII form fits, written in Unicode (an IDN's
 * Unicode form can be longer than its punycode one only up to what asciiDomain itself reads).
 */
export const MATCH_MAX_CHARS = LOCAL_PART_MAX + 1 + 253 * 4;

// Dot-atom (RFC 5322 3.4.1) without `+`, which starts the mailbox hash, and `*`, which is the wildcard alone.
const ROUTE_LOCAL = /^[a-z0-9!#$%&'/=?^_`{|}~-]+(\.[a-z0-9!#$%&'/=?^_`{|}~-]+)*$/;
// A recipient's local part: any dot-atom (quoted local parts are taken by no route).
const RECIPIENT_LOCAL = /^[a-z0-9!#$%&'*+/=?^_`{|}~-]+(\.[a-z0-9!#$%&'*+/=?^_`{|}~-]+)*$/;
// White space and controls anywhere: the URL parser behind asciiDomain would drop some at the ends unsaid.
const SPACE_OR_CONTROL = /[\0-\x20\x7f-\x9f]/;

/** A route's match in key form. */
export interface RouteMatch {
  /** Lower case, or '*'. */
  localPart: string;
  /** ASCII, lower case. */
  domain: string;
}

/** A `match` read, or what is wrong with it (a sentence to follow `match: `). */
export function readRouteMatch(input: string): RouteMatch | { problem: string } {
  const match = input.trim();
  if (match === '') return { problem: 'is required: local@domain or *@domain' };
  if (match.length > MATCH_MAX_CHARS) return { problem: `is longer than ${MATCH_MAX_CHARS} characters` };
  if (SPACE_OR_CONTROL.test(match)) return { problem: `must not contain spaces or control characters` };
  const at = match.lastIndexOf('@');
  if (at < 0) return { problem: `"${match}" is not local@domain or *@domain` };
  const local = match.slice(0, at).toLowerCase();
  const written = match.slice(at + 1);
  if (local === '') return { problem: `"${match}" has no local part: give local@domain, or *@domain for every one` };
  if (local !== WILDCARD) {
    if (local.length > LOCAL_PART_MAX) return { problem: `the local part is longer than ${LOCAL_PART_MAX} characters` };
    if (local.includes(HASH_SEPARATOR))
      return {
        problem: `"${match}": a route's local part has no "+" (mail to local+anything@domain reaches local@domain's route, the part after "+" as its mailbox_hash)`,
      };
    if (local.includes(WILDCARD)) return { problem: `"${match}": "*" stands only for the whole local part (*@domain)` };
    if (!ROUTE_LOCAL.test(local)) return { problem: `"${match}" does not have a valid local part` };
    const reserved = RESERVED_LOCAL_PREFIXES.find((p) => local.startsWith(p));
    if (reserved !== undefined)
      return {
        problem: `"${match}": local parts starting with "${reserved}" are the service's own return-path and unsubscribe addresses`,
      };
  }
  const domain = written.endsWith('.') ? undefined : asciiDomain(written);
  if (domain === undefined) return { problem: `"${written}" is not a valid domain name` };
  return { localPart: local, domain };
}

/** A recipient address in key form, its mailbox hash split off. */
export interface RecipientParts {
  /** Lower case, without the hash; '' when the address was `+hash@domain`. */
  localPart: string;
  /** What followed the first `+` of the local part, as written; '' when none. */
  mailboxHash: string;
  domain: string;
}

/**
 * A recipient as RCPT TO gives it (bare, angle brackets already taken off), or undefined when it is malformed.
 * It is read from anyone on the internet, so it is bounded before anything else looks at it.
 */
export function recipientParts(address: string): RecipientParts | undefined {
  if (address.length === 0 || address.length > LIMITS.addressChars || SPACE_OR_CONTROL.test(address)) return undefined;
  const at = address.lastIndexOf('@');
  if (at <= 0 || at > LOCAL_PART_MAX) return undefined;
  const local = address.slice(0, at);
  if (!RECIPIENT_LOCAL.test(local.toLowerCase())) return undefined;
  const written = address.slice(at + 1);
  const domain = written.endsWith('.') ? undefined : asciiDomain(written);
  if (domain === undefined) return undefined;
  const plus = local.indexOf(HASH_SEPARATOR);
  return plus < 0
    ? { localPart: local.toLowerCase(), mailboxHash: '', domain }
    : { localPart: local.slice(0, plus).toLowerCase(), mailboxHash: local.slice(plus + 1), domain };
}

/** Whether `name` is `parent` itself or a subdomain of it (both in key form). */
export const isWithin = (name: string, parent: string): boolean => name === parent || name.endsWith(`.${parent}`);
