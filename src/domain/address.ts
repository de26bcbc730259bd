import addressparser from 'nodemailer/lib/addressparser';
import { asciiDomain } from './domain-name.js';
import { LIMITS } from './limits.js';

/**
 * Email addresses as senders write them (`user@example.com`, `Jane <jane@example.com>`, `"Doe, Jane" <j@x.com>`),
 * read by one RFC 5322 parser: nodemailer's own addressparser, so the service reads an address exactly as the
 * library that sends it would. What it yields, `{name, address}`, is what every rule is judged on, what is
 * stored and what builds the headers and the SMTP envelope: nothing parses the original text again.
 */

/** One mailbox: a display name (possibly empty) and a bare address in its canonical form (canonicalAddress). */
export interface Mailbox {
  name: string;
  address: string;
}

export interface ParsedAddress extends Mailbox {
  /** The address's domain in its ASCII form, lower case: what sender domains are matched on. */
  domain: string;
}

export type AddressProblem = 'empty' | 'too-long' | 'control-characters' | 'several-addresses' | 'group' | 'invalid';

const PROBLEM_TEXT: Record<AddressProblem, string> = {
  empty: 'is empty',
  'too-long': `is longer than ${LIMITS.addressChars} characters`,
  'control-characters': 'must not contain line breaks or control characters',
  'several-addresses': 'holds several addresses: give one address per entry',
  group: 'is a group: give one address per entry',
  invalid: 'is not a valid email address',
};

export const describeAddressProblem = (p: AddressProblem): string => PROBLEM_TEXT[p];

// Dot-atom local part (RFC 5322 3.4.1); quoted local parts are refused as no real sender needs them.
const LOCAL = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*$/;
// Any C0 control or DEL: a header line must not be broken or hide content. (Tab is refused too: no name needs it.)
const CONTROL = /[\0-\x1f\x7f]/;
// Angle brackets left in a name mean the text around the address was malformed (`Name a@x.com>`).
const ANGLE = /[<>]/;

/** Letters, digits, hyphens and dots only: a name whose ASCII form is its lower case. */
const ASCII_HOST = /^[A-Za-z0-9.-]+$/;

/** A bare address checked strictly: dot-atom local part, a domain by the one rule (domain-name.ts); its ASCII domain. */
function checkAddress(address: string): ParsedAddress['domain'] | undefined {
  const at = address.lastIndexOf('@');
  if (at <= 0) return undefined;
  const local = address.slice(0, at);
  if (local.length > 64 || !LOCAL.test(local)) return undefined;
  const written = address.slice(at + 1);
  // A trailing dot is a valid absolute name elsewhere, but not in an address.
  if (written.endsWith('.')) return undefined;
  return asciiDomain(written);
}

/** Exactly one mailbox from `input`, or what is wrong with it. */
export function readMailbox(input: string): ParsedAddress | AddressProblem {
  if (input.trim() === '') return 'empty';
  if (input.length > LIMITS.addressChars) return 'too-long';
  if (CONTROL.test(input)) return 'control-characters';
  const entries = addressparser(input);
  if (entries.length > 1) return 'several-addresses';
  const [entry] = entries;
  if (!entry) return 'invalid';
  if ('group' in entry && entry.group !== undefined) return 'group';
  const name = entry.name.trim();
  if (ANGLE.test(name)) return 'invalid';
  const raw = 'address' in entry ? entry.address : '';
  // addressparser reads any text around an address as its name (`a b@x.com` is "a" <b@x.com>); a name is
  // only taken when the address closes the entry in angle brackets, as RFC 5322's name-addr writes it.
  if (name !== '' && !input.trimEnd().endsWith(`<${raw}>`)) return 'invalid';
  const domain = checkAddress(raw);
  if (domain === undefined) return 'invalid';
  // The one form from here on: what is stored, counted, suppressed, matched and handed to nodemailer.
  return { name, address: withDomain(raw, domain), domain };
}

/**
 * The one form of a bare address, converted once at acceptance: the local part as written, the domain in
 * its ASCII (UTS #46) form in lower case. `victim@ｃustomers.test` (fullwidth c), `victim@cus\u00ADtomers.test`
 * (soft hyphen) and `VICTIM@Customers.TEST` all name the mailbox nodemailer delivers to as
 * `victim@customers.test`, so suppressions, erasure and reports must see them as one. Undefined when the
 * address is not one readMailbox would accept.
 */
export function canonicalAddress(bare: string): string | undefined {
  const domain = checkAddress(bare);
  return domain === undefined ? undefined : withDomain(bare, domain);
}

/** `address` with its domain written as `domain` (the local part as given). */
const withDomain = (address: string, domain: string) => `${address.slice(0, address.lastIndexOf('@'))}@${domain}`;

/**
 * What addresses are compared on (suppressions, complaints, bounce reports, erasure, envelope against
 * headers): the canonical form in lower case. Mail systems treat local parts case-insensitively in practice,
 * and a report or a receiving server may write the domain in either form; a text that is not a valid address
 * (a report's) keeps its own lower case, with its domain converted where it is a domain.
 */
export function addressKey(address: string): string {
  const at = address.lastIndexOf('@');
  if (at < 0) return address.toLowerCase();
  // An ASCII domain's UTS #46 form is its lower case (every stored address is one): no URL parse on the send path.
  if (ASCII_HOST.test(address.slice(at + 1))) return address.toLowerCase();
  const domain = asciiDomain(address.slice(at + 1));
  return (domain === undefined ? address : withDomain(address, domain)).toLowerCase();
}

// RFC 5322 atext plus space: a name made only of these needs no quotes.
const PLAIN_NAME = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~ -]+$/;

/** How a mailbox is shown in API answers and webhook bodies: `address` or `Name <address>`. */
export function formatMailbox(m: Mailbox): string {
  if (m.name === '') return m.address;
  const name = PLAIN_NAME.test(m.name) ? m.name : `"${m.name.replace(/(["\\])/g, '\\$1')}"`;
  return `${name} <${m.address}>`;
}

/** The domain of a bare address (after its last @), in lower case. */
export const domainOf = (address: string): string => address.slice(address.lastIndexOf('@') + 1).toLowerCase();
