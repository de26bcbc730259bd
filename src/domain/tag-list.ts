/** A tag list (RFC 6376 3.2, as DKIM and DMARC records write them): `tag=value` pairs split by `;`, whitespace around them ignored. */
export function tags(record: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const part of record.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    out.set(part.slice(0, eq).trim().toLowerCase(), part.slice(eq + 1).trim());
  }
  return out;
}
