import net from 'node:net';

// Two lists: Node's BlockList matches an IPv4 address against IPv6 rules as IPv4-mapped, so one list
// holding ::ffff:0:0/96 would call every IPv4 address private.
const blocked4 = new net.BlockList();
const blocked6 = new net.BlockList();
for (const [net4, bits] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['198.51.100.0', 24],
  ['203.0.113.0', 24], ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) blocked4.addSubnet(net4, bits, 'ipv4');
for (const [net6, bits] of [
  ['::', 128], ['::1', 128], ['::ffff:0:0', 96], ['64:ff9b::', 96], ['100::', 64], ['2001:db8::', 32],
  ['fc00::', 7], ['fe80::', 10], ['ff00::', 8],
] as const) blocked6.addSubnet(net6, bits, 'ipv6');

/**
 * Addresses the service must not be steered into connecting to (SSRF): loopback, private, link-local,
 * carrier-grade NAT, documentation, multicast and reserved ranges; anything that is not an IP at all.
 * Shared by the webhook address guard and direct MX delivery, which connect wherever a customer's URL or a
 * recipient domain's DNS points.
 */
export function isPrivateAddress(address: string): boolean {
  const family = net.isIP(address);
  if (family === 0) return true;
  if (family === 6 && address.toLowerCase().startsWith('::ffff:')) {
    const v4 = address.slice(7);
    if (net.isIPv4(v4)) return blocked4.check(v4, 'ipv4');
  }
  return family === 4 ? blocked4.check(address, 'ipv4') : blocked6.check(address, 'ipv6');
}
