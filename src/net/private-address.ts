import net from 'node:net';
import { embeddedIPv4s } from '../domain/embedded-ipv4.js';

// Two lists: Node's BlockList matches an IPv4 address against IPv6 rules as IPv4-mapped, so one list
// holding ::ffff:0:0/96 would call every IPv4 address private.
const blocked4 = new net.BlockList();
const blocked6 = new net.BlockList();
for (const [net4, bits] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  // 192.88.99.0/24: the 6to4 relay anycast (RFC 7526, deprecated): a relay router, never a mail or web host.
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  blocked4.addSubnet(net4, bits, 'ipv4');
// The IPv6 forms that carry an IPv4 address (IPv4-mapped, NAT64's 64:ff9b::/96, 6to4, Teredo...) are not
// listed whole: each is judged by the IPv4 address inside it (embeddedIPv4s), so a NAT64 or 6to4 form of a
// public address stays usable while one of 127.0.0.1 is refused.
for (const [net6, bits] of [
  ['::', 128],
  ['::1', 128],
  // IPv4-compatible (RFC 4291 2.5.5.1): deprecated, once tunnelled automatically; no real host has one.
  ['::', 96],
  // NAT64 for local use (RFC 8215): its prefix length, so the IPv4 address's place, is a local choice, and
  // it may translate to private IPv4 networks.
  ['64:ff9b:1::', 48],
  ['100::', 64],
  ['2001:2::', 48],
  ['2001:db8::', 32],
  ['3fff::', 20],
  ['5f00::', 16],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
] as const)
  blocked6.addSubnet(net6, bits, 'ipv6');

/**
 * Addresses the service must not be steered into connecting to (SSRF): loopback, private, link-local,
 * carrier-grade NAT, documentation, benchmarking, multicast and reserved ranges, in IPv4 and IPv6, and any
 * IPv6 transition form (6to4, Teredo, NAT64, IPv4-mapped...) of such an IPv4 address; anything that is not
 * an IP at all. The one check shared by the webhook address guard and direct MX delivery, which connect
 * wherever a customer's URL or a recipient domain's DNS points.
 */
export function isPrivateAddress(address: string): boolean {
  const family = net.isIP(address);
  if (family === 0) return true;
  if (family === 4) return blocked4.check(address, 'ipv4');
  // A zone (fe80::1%eth0) only means something for link-local and other non-global scopes.
  if (address.includes('%')) return true;
  return blocked6.check(address, 'ipv6') || embeddedIPv4s(address).some((e) => blocked4.check(e.ipv4, 'ipv4'));
}
