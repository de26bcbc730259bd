import dns from 'node:dns';
import type { LookupFunction } from 'node:net';
import { Agent, request } from 'undici';
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
      const usable = allowPrivate ? addresses : addresses.filter((a) => !isPrivateAddress(a.address));
      if (usable.length === 0) {
        const refused = Object.assign(new Error(`${hostname} resolves only to private or loopback addresses`), {
          code: 'EPRIVATE',
        });
        return callback(refused, '', 0);
      }
      // The caller asked for every address (Node's happy-eyeballs connect does): all the usable ones.
      if (options.all) return callback(null, usable);
      callback(null, usable[0]!.address, usable[0]!.family);
    });
  };
}

/**
 * Connections are kept alive and reused (a TCP and TLS handshake per event would cost more than the event):
 * one pool per guard setting. The guard runs as the lookup of every new connection, so a kept connection
 * stays with the address that was checked. Idle connections are closed before the usual 5 s keep-alive of
 * servers, so that a request rarely races the receiver closing one. undici follows no redirect unless asked.
 */
const agents = new Map<boolean, Agent>();
function agentFor(allowPrivate: boolean): Agent {
  let agent = agents.get(allowPrivate);
  if (!agent) {
    agent = new Agent({
      keepAliveTimeout: 4000,
      keepAliveMaxTimeout: 4000,
      connect: { lookup: guardedLookup(allowPrivate) },
    });
    agents.set(allowPrivate, agent);
  }
  return agent;
}

/**
 * One webhook request: POST `body` with `headers`, a 10 s limit on the whole exchange (the answer's body
 * included), the address guard on every connection, and no redirects followed (a 3xx is a non-2xx answer).
 */
export async function postWebhook(
  url: string,
  body: string,
  headers: Record<string, string>,
  options: { allowPrivate: boolean; timeoutMs?: number },
): Promise<PostResult> {
  const started = performance.now();
  const done = (r: Omit<PostResult, 'latencyMs'>): PostResult => ({
    ...r,
    latencyMs: Math.round(performance.now() - started),
  });
  // A literal address needs no lookup, so the guard checks it here.
  const host = new URL(url).hostname.replace(/^\[|\]$/g, '');
  if (!options.allowPrivate && /^[\d.]+$|:/.test(host) && isPrivateAddress(host)) {
    return done({ statusCode: 0, excerpt: '', error: `${host} is a private or loopback address` });
  }
  const timeoutMs = options.timeoutMs ?? WEBHOOK_TIMEOUT_MS;
  const signal = AbortSignal.timeout(timeoutMs);
  try {
    const res = await request(url, {
      method: 'POST',
      body,
      headers: { ...headers, 'user-agent': WEBHOOK_USER_AGENT },
      dispatcher: agentFor(options.allowPrivate),
      signal,
    });
    return done({ statusCode: res.statusCode, excerpt: await excerptOf(res.body, signal) });
  } catch (err) {
    if (signal.aborted)
      return done({ statusCode: 0, excerpt: '', error: `ETIMEDOUT: timed out after ${timeoutMs / 1000} s` });
    const e = err as Error & { code?: unknown };
    return done({
      statusCode: 0,
      excerpt: '',
      error: typeof e.code === 'string' ? `${e.code}: ${e.message}` : e.message,
    });
  }
}

/**
 * The first KiB of an answer, read to its end so that the connection can serve the next request. An answer
 * cut off after its status still counts as that status, with what came of it; one cut off by the time limit
 * does not.
 */
async function excerptOf(body: AsyncIterable<Buffer>, signal: AbortSignal): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of body) {
      if (size < EXCERPT_BYTES) chunks.push(chunk);
      size += chunk.length;
    }
  } catch (err) {
    if (signal.aborted) throw err;
  }
  return Buffer.concat(chunks).subarray(0, EXCERPT_BYTES).toString('utf8');
}
