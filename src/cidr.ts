import net from 'node:net';

/** An address or a network as settings write them: `203.0.113.7`, `172.16.0.0/12`, `2001:db8::/32`. */
export interface Cidr {
  address: string;
  /** The prefix length; a lone address is its family's full length (32 or 128). */
  prefix: number;
  family: 'ipv4' | 'ipv6';
}

/** `entry` as an address or a CIDR network, or undefined when it is neither (a bad prefix included). */
export function parseCidr(entry: string): Cidr | undefined {
  const [address = '', bits, extra] = entry.split('/');
  const version = net.isIP(address);
  if (version === 0 || extra !== undefined) return undefined;
  const full = version === 4 ? 32 : 128;
  if (bits !== undefined && (!/^\d{1,3}$/.test(bits) || Number(bits) > full)) return undefined;
  return { address, prefix: bits === undefined ? full : Number(bits), family: version === 4 ? 'ipv4' : 'ipv6' };
}
