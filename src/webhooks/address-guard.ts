import dns from 'node:dns/promises';
import net from 'node:net';

/**
 * Webhooks may only reach public addresses unless MAILER_WEBHOOK_ALLOW_PRIVATE=1: otherwise any account
 * could make the service call its own database, cloud metadata or admin ports (SSRF). The check resolves
 * the name itself; delivery connects to the address checked here, so a name that re-resolves differently
 * (DNS rebinding) gains nothing.
 */
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

export function isPrivateAddress(address: string): boolean {
  const family = net.isIP(address);
  if (family === 0) return true;
  if (family === 6 && address.toLowerCase().startsWith('::ffff:')) {
    const v4 = address.slice(7);
    if (net.isIPv4(v4)) return blocked4.check(v4, 'ipv4');
  }
  return family === 4 ? blocked4.check(address, 'ipv4') : blocked6.check(address, 'ipv6');
}

export type UrlCheck = { ok: true; addresses: string[] } | { ok: false; reason: string };

/** Checks a webhook URL's form and where it resolves to. */
export async function checkWebhookUrl(raw: string, allowPrivate: boolean): Promise<UrlCheck> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, reason: `"${raw}" is not a URL` };
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return { ok: false, reason: 'the URL must use http or https' };
  if (url.username !== '' || url.password !== '') return { ok: false, reason: 'the URL must not carry credentials' };
  const host = url.hostname.replace(/^\[|\]$/g, '');
  let addresses: string[];
  try {
    addresses = net.isIP(host) ? [host] : (await dns.lookup(host, { all: true, verbatim: true })).map((a) => a.address);
  } catch {
    return { ok: false, reason: `the host ${host} does not resolve` };
  }
  if (addresses.length === 0) return { ok: false, reason: `the host ${host} does not resolve` };
  if (!allowPrivate && addresses.some(isPrivateAddress)) {
    return { ok: false, reason: `the host ${host} resolves to a private or loopback address (set MAILER_WEBHOOK_ALLOW_PRIVATE=1 to allow)` };
  }
  return { ok: true, addresses };
}
