import nodemailer from 'nodemailer';
import type { SentMessageInfo } from 'nodemailer';
import type { Logger } from '../../../logger.js';
import { sendBuilt, type BuiltMessage, type SmtpTransporter } from '../send-built.js';
import { SMTP_TIMEOUTS } from '../transport.js';
import type { MxTarget } from './mx-route.js';

export interface HostPoolOptions {
  /** The port every MX is reached on (MAILER_MX_PORT, 25). */
  port: number;
  /** The EHLO name (MAILER_HOSTNAME). */
  name: string;
  /** Simultaneous connections to one destination address; sends beyond this wait for a free one. */
  maxConnectionsPerHost: number;
  /** A connection, and a pool with nothing in flight, unused this long is closed. */
  idleMs: number;
  /** Pools kept at once; past it the least recently used idle one is closed. */
  maxPools: number;
  logger: Pick<Logger, 'info' | 'warn'>;
}

export interface HostPools {
  /** Sends through the pool of `target`'s address (made on first use); rejects with nodemailer's error. */
  send(target: MxTarget, message: BuiltMessage): Promise<SentMessageInfo>;
  /**
   * After a failed TLS handshake: this address is sent to in plain text from now on, until its pool goes
   * idle and is closed (the next pool tries STARTTLS again).
   */
  usePlaintext(target: MxTarget): void;
  /** Open pools (for tests and metrics). */
  size(): number;
  close(): void;
}

interface Pool {
  transporter: SmtpTransporter;
  plaintext: boolean;
  inFlight: number;
  lastUsed: number;
  /** Replaced or evicted: closed once its last send settles. */
  retired: boolean;
}

/** A pooled transport to one address, trying STARTTLS unless `plaintext`. */
function openPool(target: MxTarget, plaintext: boolean, options: HostPoolOptions): Pool {
  return {
    transporter: nodemailer.createTransport({
      host: target.address,
      port: options.port,
      name: options.name,
      secure: false,
      // RFC 7435 opportunistic security: STARTTLS whenever offered, any certificate (MX certificates are
      // often self-signed or for another name), plain text when the server offers none or refuses it.
      opportunisticTLS: true,
      ignoreTLS: plaintext,
      servername: target.exchange,
      tls: { rejectUnauthorized: false, servername: target.exchange },
      pool: true,
      maxConnections: options.maxConnectionsPerHost,
      maxMessages: 100,
      // One retry covers a reused connection the server dropped; a host that keeps dropping fails over.
      maxRequeues: 1,
      idleTimeout: options.idleMs,
      ...SMTP_TIMEOUTS,
      logger: false,
    }),
    plaintext,
    inFlight: 0,
    lastUsed: Date.now(),
    retired: false,
  };
}

/** Takes `pool` out of use; its transport closes now if idle, else when its last send settles. */
function retire(pools: Map<string, Pool>, key: string, pool: Pool): void {
  if (pools.get(key) === pool) pools.delete(key);
  pool.retired = true;
  if (pool.inFlight === 0) pool.transporter.close();
}

function evictIdle(pools: Map<string, Pool>, olderThan: number): void {
  for (const [key, pool] of pools) if (pool.inFlight === 0 && pool.lastUsed <= olderThan) retire(pools, key, pool);
}

/** Closes the least recently used idle pool; when every pool is busy, one more than maxPools is opened. */
function makeRoom(pools: Map<string, Pool>, logger: HostPoolOptions['logger']): void {
  const idle = [...pools].filter(([, p]) => p.inFlight === 0).sort(([, a], [, b]) => a.lastUsed - b.lastUsed);
  const [oldest] = idle;
  if (oldest) retire(pools, ...oldest);
  else logger.warn({ pools: pools.size }, 'direct delivery: every host pool is busy; opening one more than maxPools');
}

/**
 * One pooled nodemailer transport per destination address and port, shared by every message and every
 * domain that routes there, so the per-host connection limit holds however many domains share an MX
 * (e.g. every Google Workspace domain) and connections are reused across messages.
 */
export function createHostPools(options: HostPoolOptions): HostPools {
  const pools = new Map<string, Pool>();
  const keyOf = (target: MxTarget) => `${target.address}|${options.port}`;

  let closed = false;
  const poolFor = (target: MxTarget): Pool => {
    if (closed) throw Object.assign(new Error('the direct transport is closed'), { code: 'ECONNECTION' });
    const key = keyOf(target);
    const existing = pools.get(key);
    if (existing) return existing;
    if (pools.size >= options.maxPools) makeRoom(pools, options.logger);
    const pool = openPool(target, false, options);
    pools.set(key, pool);
    return pool;
  };

  const sweep = setInterval(() => evictIdle(pools, Date.now() - options.idleMs), Math.max(1000, options.idleMs / 2));
  sweep.unref();

  return {
    async send(target, message) {
      const pool = poolFor(target);
      pool.inFlight++;
      try {
        return await sendBuilt(pool.transporter, message);
      } finally {
        pool.inFlight--;
        pool.lastUsed = Date.now();
        if (pool.retired && pool.inFlight === 0) pool.transporter.close();
      }
    },
    usePlaintext(target) {
      const key = keyOf(target);
      const current = pools.get(key);
      if (closed || current?.plaintext) return;
      if (current) retire(pools, key, current);
      options.logger.info(
        { host: target.exchange, address: target.address },
        'direct delivery: TLS handshake failed; sending in plain text',
      );
      pools.set(key, openPool(target, true, options));
    },
    size: () => pools.size,
    close() {
      closed = true;
      clearInterval(sweep);
      for (const [key, pool] of pools) retire(pools, key, pool);
    },
  };
}
