/** RFC 5321 4.5.3.1.8 asks servers to take at least 100 recipients per transaction; more go in a second one. */
export const MAX_RECIPIENTS_PER_TRANSACTION = 100;

/** The domain part of an address, lower-cased: domains are case-insensitive, local parts are not. */
export function domainOf(address: string): string {
  const at = address.lastIndexOf('@');
  return (at < 0 ? '' : address.slice(at + 1)).replace(/\.$/, '').toLowerCase();
}

/**
 * Envelope recipients by domain, in the order they first appear, each address once (as written: a
 * local part may be case-sensitive). Every domain is a
 * separate delivery (its own MX hosts, its own answers); IDN domains arrive already in ASCII form.
 */
export function groupByDomain(recipients: string[]): Map<string, string[]> {
  const groups = new Map<string, string[]>();
  for (const address of new Set(recipients)) {
    const domain = domainOf(address);
    const group = groups.get(domain);
    if (group) group.push(address);
    else groups.set(domain, [address]);
  }
  return groups;
}

/** `items` in consecutive slices of at most `size`. */
export function chunk<T>(items: T[], size: number): T[][] {
  const slices: T[][] = [];
  for (let i = 0; i < items.length; i += size) slices.push(items.slice(i, i + size));
  return slices;
}
