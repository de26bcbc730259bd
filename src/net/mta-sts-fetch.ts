import https from 'node:https';
import net from 'node:net';
import type { DnsResolver } from './dns-resolver.js';
import { isPrivateAddress } from './private-address.js';

/** RFC 8461 3.3 leaves the bounds to the sender; these are Postfix's mta-sts-resolver's and Google's. */
export const MAX_POLICY_BYTES = 64 * 1024;
export const POLICY_TIMEOUT_MS = 10_000;

export interface PolicyFetchOptions {
  resolver: DnsResolver;
  /** The HTTPS port (MAILER_MTA_STS_PORT): 443 in the world. */
  port: number;
  /** Fetch from loopback and private addresses too (tests and closed networks). */
  allowPrivate: boolean;
  timeoutMs?: number;
  /**
   * Tests only: the CA certificates (PEM) to verify against, instead of Node's. Production passes none, so the
   * policy host's certificate is verified against Node's bundled CAs plus NODE_EXTRA_CA_CERTS (which Node reads
   * once at start, so a test cannot set it in-process).
   */
  ca?: string[];
}

/** Why a policy could not be fetched: the cause travels in the message (logged), never to a recipient. */
export class PolicyFetchError extends Error {}

/**
 * The policy file of `domain` (RFC 8461 3.3): `GET https://mta-sts.<domain>/.well-known/mta-sts.txt`, the host
 * resolved through the service's resolver (MAILER_DNS_SERVERS), connected to by address with the name as SNI and
 * Host so that the certificate is verified for the name. No redirects (RFC 8461 3.3: a 3xx is a failure), a
 * 2xx `text/plain` answer of at most 64 KiB within 10 s, else PolicyFetchError.
 */
export async function fetchPolicyText(domain: string, options: PolicyFetchOptions): Promise<string> {
  const host = `mta-sts.${domain}`;
  const addresses = await policyHostAddresses(host, options);
  let lastError: Error | undefined;
  // The next address only when one cannot be reached: an answer, whatever it is, settles the fetch.
  for (const address of addresses) {
    try {
      return await getPolicy(host, address, options);
    } catch (err) {
      if (!(err instanceof UnreachableError)) throw err;
      lastError = err;
    }
  }
  throw new PolicyFetchError(`https://${host}:${options.port}: ${lastError?.message ?? 'no address'}`);
}

class UnreachableError extends Error {}

async function policyHostAddresses(host: string, options: PolicyFetchOptions): Promise<string[]> {
  const [v4, v6] = await Promise.allSettled([options.resolver.resolve4(host), options.resolver.resolve6(host)]);
  const found = [v4, v6].flatMap((r) => (r.status === 'fulfilled' ? r.value : []));
  if (found.length === 0) {
    const failed = [v4, v6].find((r): r is PromiseRejectedResult => r.status === 'rejected');
    throw new PolicyFetchError(
      failed ? `lookup of ${host} failed: ${(failed.reason as Error).message}` : `${host} has no address`,
    );
  }
  const usable = options.allowPrivate ? found : found.filter((a) => !isPrivateAddress(a));
  if (usable.length === 0)
    throw new PolicyFetchError(`${host} resolves only to private addresses (${found.join(', ')})`);
  return usable;
}

/** RFC 8461 3.2: the policy's media type is text/plain (parameters such as charset allowed). */
const isTextPlain = (contentType: string | undefined): boolean =>
  (contentType ?? '').split(';')[0]?.trim().toLowerCase() === 'text/plain';

function getPolicy(host: string, address: string, options: PolicyFetchOptions): Promise<string> {
  const timeoutMs = options.timeoutMs ?? POLICY_TIMEOUT_MS;
  return new Promise<string>((resolve, reject) => {
    let settled = false;
    const finish = (err: Error | null, body?: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      req.destroy();
      if (err) reject(err);
      else resolve(body as string);
    };
    const url = `https://${host}:${options.port}/.well-known/mta-sts.txt`;
    const req = https.request({
      host: address,
      family: net.isIP(address),
      port: options.port,
      path: '/.well-known/mta-sts.txt',
      method: 'GET',
      servername: host,
      headers: { host: options.port === 443 ? host : `${host}:${options.port}`, accept: 'text/plain' },
      rejectUnauthorized: true,
      // A fresh connection per fetch: policies are fetched at most once a domain a max_age.
      agent: false,
      ...(options.ca ? { ca: options.ca } : {}),
    });
    // The whole exchange, not only an idle socket: a server trickling bytes must not hold delivery.
    const timer = setTimeout(
      () => finish(new PolicyFetchError(`${url}: no complete answer within ${timeoutMs} ms`)),
      timeoutMs,
    );
    req.on('error', (err: NodeJS.ErrnoException) => {
      const unreachable = ['ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'EADDRNOTAVAIL'].includes(err.code ?? '');
      finish(
        unreachable
          ? new UnreachableError(`${address}: ${err.message}`)
          : new PolicyFetchError(`${url} (${address}): ${err.message}`),
      );
    });
    req.on('response', (res) => {
      const status = res.statusCode ?? 0;
      if (status < 200 || status > 299)
        return finish(new PolicyFetchError(`${url} answered HTTP ${status} (redirects are not followed)`));
      if (!isTextPlain(res.headers['content-type']))
        return finish(
          new PolicyFetchError(`${url} answered ${res.headers['content-type'] ?? 'no content type'}, not text/plain`),
        );
      const declared = Number(res.headers['content-length']);
      if (declared > MAX_POLICY_BYTES)
        return finish(new PolicyFetchError(`${url}: policy of ${declared} bytes, over ${MAX_POLICY_BYTES}`));
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > MAX_POLICY_BYTES) finish(new PolicyFetchError(`${url}: policy over ${MAX_POLICY_BYTES} bytes`));
        else chunks.push(chunk);
      });
      res.on('end', () => finish(null, Buffer.concat(chunks).toString('utf8')));
      res.on('error', (err) => finish(new PolicyFetchError(`${url}: ${err.message}`)));
    });
    req.end();
  });
}
