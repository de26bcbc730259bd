/**
 * The one rule for domain names, used for sender domains an operator adds and for the domain of every
 * address: lower case, no trailing dot, internationalised names in their ASCII (IDNA/punycode) form, at
 * least two labels of letters, digits and hyphens. So `bücher.de` and `xn--bcher-kva.de` are one domain,
 * an IDN sender can be verified, and Message-IDs built from a domain stay ASCII as RFC 5322 wants.
 */

const ASCII_DOMAIN = /^(?=.{1,253}$)((?!-)[a-z0-9-]{1,63}(?<!-)\.)+(?!-)[a-z0-9-]{1,63}(?<!-)$/;
// Characters a host name may not hold but a URL would read as something else (port, path, user, query), and
// control characters, which the URL parser strips at the ends: checked would not be what is stored.
const NOT_IN_A_NAME = /[\s/\\@:?#[\]%\p{Cc}]/u;

/** The ASCII form of `input` as a domain name, or undefined when it is not one. */
export function asciiDomain(input: string): string | undefined {
  const name = input.trim().toLowerCase().replace(/\.$/, '');
  if (name === '' || name.length > 253 * 4 || NOT_IN_A_NAME.test(name)) return undefined;
  let ascii: string;
  try {
    // WHATWG URL applies UTS #46 (IDNA) to the host: the same mapping browsers and mail clients use.
    ascii = new URL(`http://${name}`).hostname;
  } catch {
    return undefined;
  }
  // An all-numeric last label would be read as an IPv4 address.
  if (!ASCII_DOMAIN.test(ascii) || /\.\d+$/.test(ascii)) return undefined;
  return ascii;
}
