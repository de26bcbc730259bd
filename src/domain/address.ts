import { LIMITS } from './limits.js';

/**
 * Email addresses as senders write them: `user@example.com` or `Name <user@example.com>` (the name may be
 * quoted). Validated here, before nodemailer sees them, so that no CR, LF or stray `<`/`>` reaches a header.
 */

export interface ParsedAddress {
  name: string;
  address: string;
  domain: string;
}

// Dot-atom local part (RFC 5322 3.4.1); quoted local parts are refused as no real sender needs them.
const LOCAL = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*$/;
// Letters, digits and hyphens per label (Unicode letters allowed: nodemailer encodes IDNs), at least two labels.
const LABEL = /^(?!-)[\p{L}\p{N}-]{1,63}(?<!-)$/u;
const WITH_NAME = /^(?:"((?:[^"\\]|\\.)*)"|([^"<>]*?))\s*<([^<>\s]+)>$/;

export function parseAddress(input: string): ParsedAddress | undefined {
  if (input.length === 0 || input.length > LIMITS.addressChars || /[\r\n\0]/.test(input)) return undefined;
  const trimmed = input.trim();
  let name = '';
  let address = trimmed;
  const m = WITH_NAME.exec(trimmed);
  if (m) {
    name = (m[1] !== undefined ? m[1].replace(/\\(.)/g, '$1') : (m[2] ?? '')).trim();
    address = m[3] ?? '';
  } else if (/[<>"\s]/.test(trimmed)) {
    return undefined;
  }
  const at = address.lastIndexOf('@');
  if (at <= 0) return undefined;
  const local = address.slice(0, at);
  const domain = address.slice(at + 1).toLowerCase();
  if (local.length > 64 || !LOCAL.test(local)) return undefined;
  if (domain.length > 253) return undefined;
  const labels = domain.split('.');
  if (labels.length < 2 || !labels.every((l) => LABEL.test(l))) return undefined;
  return { name, address: `${local}@${domain}`, domain };
}
