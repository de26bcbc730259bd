import dns from 'node:dns/promises';
import net from 'node:net';
import { isPrivateAddress } from '../net/private-address.js';

/**
 * Webhooks may only reach public addresses unless MAILER_WEBHOOK_ALLOW_PRIVATE=1: otherwise any account
 * could make the service call its own database, cloud metadata or admin ports (SSRF). The check resolves
 * the name itself; delivery connects to the address checked here, so a name that re-resolves differently
 * (DNS rebinding) gains nothing.
 */
export { isPrivateAddress } from '../net/private-address.js';

export type UrlCheck = { ok: true; addresses: string[] } | { ok: false; reason: string };

/** Checks a webhook URL's form and where it resolves to. */
export async function checkWebhookUrl(raw: string, allowPrivate: boolean): Promise<UrlCheck> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, reason: `"${raw}" is not a URL` };
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    return { ok: false, reason: 'the URL must use http or https' };
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
    return {
      ok: false,
      reason: `the host ${host} resolves to a private or loopback address (set MAILER_WEBHOOK_ALLOW_PRIVATE=1 to allow)`,
    };
  }
  return { ok: true, addresses };
}
