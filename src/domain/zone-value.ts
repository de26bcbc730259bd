/**
 * A DNS TXT record holds one or more character strings of at most 255 bytes each (RFC 1035 3.3.14), which a
 * receiver joins back into one value (RFC 6376 3.6.2.2 for DKIM, RFC 7208 3.3 for SPF). A DKIM record of an
 * RSA-2048 key is about 410 characters, so it must be published as several strings: zone files and most DNS
 * providers' forms take it as quoted strings side by side, and some refuse or silently cut one longer string.
 * The records' values are ASCII (base64, tokens, host names), so a character is a byte here.
 */
export const TXT_STRING_MAX = 255;

/** The value as character strings of TXT_STRING_MAX characters (the last one shorter); their concatenation is it. */
export function txtStrings(value: string): string[] {
  if (value.length <= TXT_STRING_MAX) return [value];
  const strings: string[] = [];
  for (let i = 0; i < value.length; i += TXT_STRING_MAX) strings.push(value.slice(i, i + TXT_STRING_MAX));
  return strings;
}

/** One character string as a zone file writes it: quoted, with `"` and `\` escaped. */
const quoted = (s: string) => `"${s.replace(/[\\"]/g, (c) => `\\${c}`)}"`;

/**
 * A record's value as its owner types it into a zone file or a DNS provider's form: a TXT value as quoted
 * 255-character strings separated by a space (`"v=DKIM1; k=rsa; p=MIIB…" "…"`), one quoted string when it fits;
 * any other type's value as it is.
 */
export function zoneValue(type: string, value: string): string {
  return type === 'TXT' ? txtStrings(value).map(quoted).join(' ') : value;
}
