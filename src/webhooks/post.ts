import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { isPrivateAddress } from './address-guard.js';

/** The receiver must answer within this (spec: Delivery rules 1). */
export const WEBHOOK_TIMEOUT_MS = 10_000;
/** How much of a response body is kept with an attempt, for operators. */
const EXCERPT_BYTES = 1024;
export const WEBHOOK_USER_AGENT = 'mailer-webhooks/1';

export interface PostResult {
  /** 0 when no HTTP answer came (network error, timeout, refused address). */
  statusCode: number;
  latencyMs: number;
  excerpt: string;
  error?: string;
}

/**
 * A lookup that refuses private and loopback addresses unless allowed. The connection uses the address
 * this returns, so the check and the connect see the same address: a name that resolves differently on
 * a second lookup (DNS rebinding) gains nothing.
 */
export function guardedLookup(allowPrivate: boolean): LookupFunction {
  return (hostname, options, callback) => {
    dns.lookup(hostname, { ...options, all: true, verbatim: true }, (err, addresses) => {
      if (err) return callback(err, '', 0);
      const list = addresses as dns.LookupAddress[];
      const usable = allowPrivate ? list : list.filter((a) => !isPrivateAddress(a.address));
      if (usable.length === 0) {
        const refused = Object.assign(new Error(`${hostname} resolves only to private or loopback addresses`), { code: 'EPRIVATE' });
        return callback(refused, '', 0);
      }
      if ((options as { all?: boolean }).all) return (callback as unknown as (e: null, a: dns.LookupAddress[]) => void)(null, usable);
      callback(null, usable[0]!.address, usable[0]!.family);
    });
  };
}

/**
 * Connections are kept alive and reused (a TCP and TLS handshake per event would cost more than the
 * event): one pool per protocol and guard setting. The guard runs on every new connection, and a kept
 * connection stays with the address that was checked. Idle connections are closed before the usual
 * 5 s keep-alive of servers, so that a request rarely races the receiver closing one.
 */
const agents = new Map<string, http.Agent>();
function agentFor(protocol: string, allowPrivate: boolean): http.Agent {
  const key = `${protocol}${allowPrivate}`;
  let agent = agents.get(key);
  if (!agent) {
    const options = { keepAlive: true, timeout: 4000, maxFreeSockets: 64, scheduling: 'lifo' as const, lookup: guardedLookup(allowPrivate) };
    agent = protocol === 'https:' ? new https.Agent(options) : new http.Agent(options);
    agents.set(key, agent);
  }
  return agent;
}

/**
 * One webhook request: POST `body` with `headers`, a 10 s limit on the whole exchange, the address guard on
 * every connection, and no redirects followed (a 3xx is a non-2xx answer).
 */
export function postWebhook(url: string, body: string, headers: Record<string, string>, options: { allowPrivate: boolean; timeoutMs?: number }): Promise<PostResult> {
  const started = performance.now();
  const target = new URL(url);
  const client = target.protocol === 'https:' ? https : http;
  const host = target.hostname.replace(/^\[|\]$/g, '');
  return new Promise<PostResult>((resolve) => {
    const done = (r: Omit<PostResult, 'latencyMs'>) => resolve({ ...r, latencyMs: Math.round(performance.now() - started) });
    if (!options.allowPrivate && /^[\d.]+$|:/.test(host) && isPrivateAddress(host)) {
      return done({ statusCode: 0, excerpt: '', error: `${host} is a private or loopback address` });
    }
    const req = client.request(target, {
      method: 'POST',
      headers: { ...headers, 'content-length': String(Buffer.byteLength(body)), 'user-agent': WEBHOOK_USER_AGENT },
      lookup: guardedLookup(options.allowPrivate),
      agent: agentFor(target.protocol, options.allowPrivate),
      timeout: options.timeoutMs ?? WEBHOOK_TIMEOUT_MS,
    });
    const deadline = setTimeout(() => req.destroy(Object.assign(new Error('timed out after 10 s'), { code: 'ETIMEDOUT' })), options.timeoutMs ?? WEBHOOK_TIMEOUT_MS);
    req.on('timeout', () => req.destroy(Object.assign(new Error('timed out'), { code: 'ETIMEDOUT' })));
    req.on('error', (err: Error & { code?: string }) => {
      clearTimeout(deadline);
      done({ statusCode: 0, excerpt: '', error: err.code ? `${err.code}: ${err.message}` : err.message });
    });
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        if (size < EXCERPT_BYTES) chunks.push(c);
        size += c.length;
      });
      res.on('end', () => {
        clearTimeout(deadline);
        done({ statusCode: res.statusCode ?? 0, excerpt: Buffer.concat(chunks).subarray(0, EXCERPT_BYTES).toString('utf8') });
      });
      res.on('error', () => {
        clearTimeout(deadline);
        done({ statusCode: res.statusCode ?? 0, excerpt: Buffer.concat(chunks).toString('utf8') });
      });
    });
    req.end(body);
  });
}
