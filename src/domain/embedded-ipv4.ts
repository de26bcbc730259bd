/**
 * The IPv4 addresses an IPv6 address carries in its bits under the IPv6 transition mechanisms. A deny-list
 * that judges an IPv6 address by its prefix alone lets `2002:7f00:1::1` (6to4 of 127.0.0.1) or Teredo and
 * NAT64 forms of private addresses through, though a host with the matching tunnel or translator delivers
 * them to the IPv4 address inside. The SSRF guard (src/net/private-address.ts) judges every address found here
 * as it judges that IPv4 address itself.
 *
 * Pure: it parses the text itself (any textual form of RFC 4291 2.2: zero compression, leading zeros, upper
 * case, a dotted-quad tail), so two spellings of one address always give the same answer.
 */

export type TransitionForm =
  | 'ipv4-mapped' // ::ffff:a.b.c.d (RFC 4291 2.5.5.2): the socket API's IPv4 address in an IPv6 socket
  | 'ipv4-translated' // ::ffff:0:a.b.c.d (RFC 2765, SIIT)
  | 'ipv4-compatible' // ::a.b.c.d (RFC 4291 2.5.5.1, deprecated; once auto-tunnelled)
  | 'nat64' // 64:ff9b::a.b.c.d (RFC 6052 well-known prefix)
  | '6to4' // 2002:AABB:CCDD::/48 (RFC 3056)
  | 'teredo-server' // 2001:0:SSSS:SSSS:... (RFC 4380: bits 32-63)
  | 'teredo-client' // 2001:0:...:CCCC:CCCC (RFC 4380: the last 32 bits, each inverted)
  | 'isatap'; // <prefix>:0000:5efe:a.b.c.d or 0200:5efe:... (RFC 5214 interface identifier)

export interface EmbeddedIPv4 {
  form: TransitionForm;
  ipv4: string;
}

/** The eight 16-bit groups of an IPv6 address in text (no zone), or undefined when it is none. */
export function ipv6Groups(text: string): number[] | undefined {
  if (text.length > 45 || !/^[0-9A-Fa-f:.]+$/.test(text)) return undefined;
  const halves = text.split('::');
  if (halves.length > 2) return undefined;
  const parse = (part: string, lastHalf: boolean): number[] | undefined => {
    if (part === '') return [];
    const pieces = part.split(':');
    const groups: number[] = [];
    for (const [i, piece] of pieces.entries()) {
      if (piece.includes('.')) {
        // A dotted quad only as the address's last 32 bits.
        if (!lastHalf || i !== pieces.length - 1) return undefined;
        const quad = ipv4Bytes(piece);
        if (!quad) return undefined;
        groups.push((quad[0]! << 8) | quad[1]!, (quad[2]! << 8) | quad[3]!);
      } else if (/^[0-9A-Fa-f]{1,4}$/.test(piece)) {
        groups.push(parseInt(piece, 16));
      } else {
        return undefined;
      }
    }
    return groups;
  };
  const head = parse(halves[0]!, halves.length === 1);
  const tail = halves.length === 2 ? parse(halves[1]!, true) : [];
  if (!head || !tail) return undefined;
  if (halves.length === 1) return head.length === 8 ? head : undefined;
  // `::` stands for at least one group of zeros.
  const missing = 8 - head.length - tail.length;
  return missing >= 1 ? [...head, ...new Array<number>(missing).fill(0), ...tail] : undefined;
}

/** The four bytes of a dotted-quad IPv4 address (decimal, no leading zeros), or undefined. */
function ipv4Bytes(text: string): number[] | undefined {
  const parts = text.split('.');
  if (parts.length !== 4 || !parts.every((p) => /^(0|[1-9]\d{0,2})$/.test(p) && Number(p) <= 255)) return undefined;
  return parts.map(Number);
}

const dotted = (high: number, low: number): string => [high >> 8, high & 0xff, low >> 8, low & 0xff].join('.');

/**
 * Every IPv4 address `ipv6` embeds, each with the mechanism that would carry traffic to it; empty for an
 * address of no transition form (or text that is no IPv6 address). A zone (`%eth0`) is ignored here.
 */
export function embeddedIPv4s(ipv6: string): EmbeddedIPv4[] {
  const g = ipv6Groups(ipv6.split('%')[0]!);
  if (!g) return [];
  const [g0, g1, g2, g3, g4, g5, g6, g7] = g as [number, number, number, number, number, number, number, number];
  const found: EmbeddedIPv4[] = [];
  const zeroTo = (n: number) => g.slice(0, n).every((x) => x === 0);
  if (zeroTo(5) && g5 === 0xffff) found.push({ form: 'ipv4-mapped', ipv4: dotted(g6, g7) });
  if (zeroTo(4) && g4 === 0xffff && g5 === 0) found.push({ form: 'ipv4-translated', ipv4: dotted(g6, g7) });
  if (zeroTo(6)) found.push({ form: 'ipv4-compatible', ipv4: dotted(g6, g7) });
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0)
    found.push({ form: 'nat64', ipv4: dotted(g6, g7) });
  if (g0 === 0x2002) found.push({ form: '6to4', ipv4: dotted(g1, g2) });
  if (g0 === 0x2001 && g1 === 0) {
    found.push({ form: 'teredo-server', ipv4: dotted(g2, g3) });
    found.push({ form: 'teredo-client', ipv4: dotted(g6 ^ 0xffff, g7 ^ 0xffff) });
  }
  // RFC 5214 6.1: 0000:5efe or 0200:5efe, the universal/local and group bits aside.
  if ((g4 & 0xfcff) === 0 && g5 === 0x5efe) found.push({ form: 'isatap', ipv4: dotted(g6, g7) });
  return found;
}
