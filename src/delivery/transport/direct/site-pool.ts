import { Readable } from 'node:stream';
import type { TLSSocket } from 'node:tls';
import SMTPConnection, { type SMTPConnectionSendInfo } from 'nodemailer/lib/smtp-connection';
import type { DeliveryTls, SiteShape, SourceAddress } from '../../../domain/entities/egress.js';
import type { Logger } from '../../../logger.js';
import { wireEnvelope, type BuiltMessage } from '../send-built.js';
import { SMTP_TIMEOUTS } from '../transport.js';
import type { MxTarget } from './mx-route.js';

/**
 * Direct delivery's SMTP connections, kept per destination site (egress shaping, issue 28; as ZoneMTA keeps
 * its own over nodemailer's SMTPConnection, which gives the socket: the TLS version, whether the certificate
 * verified, the bound address). Per site at most `connectionLimit` connections are open in this process,
 * idle ones included, whatever MX address or source address they use: a connection of another address that is
 * idle is closed to make room. A connection carries at most `messagesPerConnection` transactions. A send that
 * finds no room waits in the site's queue, which holds at most 4 x connectionLimit; one more is refused at
 * once (SiteQueueFull), so a slow site cannot take every delivery lane of the worker.
 */

export interface SitePoolOptions {
  /** The port every MX is reached on (MAILER_MX_PORT, 25). */
  port: number;
  /** The EHLO name of an unbound connection (MAILER_HOSTNAME). */
  name: string;
  /** A connection unused this long is closed (QUIT). */
  idleMs: number;
  /** The site's connection limit and messages per connection, read at each send (the rules may be reloaded). */
  shapeOf(site: string): Pick<SiteShape, 'connectionLimit' | 'messagesPerConnection'>;
  /** Told whenever a site's open connections change (the shaper's live figures). */
  connectionsChanged?(site: string, delta: number): void;
  logger: Pick<Logger, 'info' | 'warn'>;
}

/** How a connection must secure itself: opportunistically (RFC 7435), or verified TLS for the MX name (MTA-STS enforce). */
export type TlsPolicy = 'opportunistic' | 'verified';

export interface PooledSend {
  site: string;
  target: MxTarget;
  /** The local address to bind to, with its EHLO name; null: unbound, MAILER_HOSTNAME. */
  source: SourceAddress | null;
  tls: TlsPolicy;
}

/** What the server answered a transaction, and the TLS of the connection it went over. */
export interface PooledResult {
  info: SMTPConnectionSendInfo;
  tls: DeliveryTls;
}

export interface SitePools {
  /** One transaction over a connection of `send.site`; rejects with nodemailer's error, or SiteQueueFull. */
  send(send: PooledSend, message: BuiltMessage): Promise<PooledResult>;
  /**
   * After a failed TLS handshake: connections to this address from this source go in plain text until none
   * has been used for the idle time (the next one tries STARTTLS again).
   */
  usePlaintext(target: MxTarget, source: SourceAddress | null): void;
  /** Connections open to `site` now (every site when omitted). */
  open(site?: string): number;
  close(): void;
}

/** The site's queue is full: the transaction is deferred without waiting (egress shaping, not the server). */
export class SiteQueueFull extends Error {
  readonly shaping = true;
  constructor(readonly site: string) {
    super(`4.4.5 held by egress shaping: site ${site} queue full`);
  }
}

/** Waiting sends per site, as a multiple of its connection limit. */
export const QUEUE_FACTOR = 4;

interface Conn {
  site: string;
  /** What it may be reused for: the same address, source and TLS. */
  key: string;
  connection: SMTPConnection;
  /** Ready: the handshake (and STARTTLS) done. */
  ready: Promise<void>;
  busy: boolean;
  messages: number;
  closed: boolean;
  idleTimer: NodeJS.Timeout | undefined;
  tls: DeliveryTls;
}

interface Waiter {
  send: PooledSend;
  key: string;
  grant: (conn: Conn) => void;
  fail: (err: Error) => void;
}

interface Site {
  conns: Set<Conn>;
  waiting: Waiter[];
}

const sourceOf = (source: SourceAddress | null): string => source?.address ?? '';

const closedError = (): Error => Object.assign(new Error('the direct transport is closed'), { code: 'ECONNECTION' });

export function createSitePools(options: SitePoolOptions): SitePools {
  const sites = new Map<string, Site>();
  /** `address|source` -> plain text until this time. */
  const plaintextUntil = new Map<string, number>();
  let closed = false;

  const siteOf = (name: string): Site => {
    let site = sites.get(name);
    if (!site) {
      site = { conns: new Set(), waiting: [] };
      sites.set(name, site);
    }
    return site;
  };

  const plainKey = (target: MxTarget, source: SourceAddress | null) => `${target.address}|${sourceOf(source)}`;
  /** Plain text for this address and source; each use keeps it so for another idle time. */
  const isPlaintext = (target: MxTarget, source: SourceAddress | null): boolean => {
    const key = plainKey(target, source);
    const until = plaintextUntil.get(key);
    if (until === undefined) return false;
    if (until <= Date.now()) {
      plaintextUntil.delete(key);
      return false;
    }
    plaintextUntil.set(key, Date.now() + options.idleMs);
    return true;
  };
  const keyOf = (send: PooledSend) =>
    `${send.target.address}|${send.target.exchange}|${sourceOf(send.source)}|${send.tls}|${
      send.tls === 'opportunistic' && isPlaintext(send.target, send.source) ? 'plain' : 'tls'
    }`;

  /**
   * Forgets a closed connection and hands its room to the site's queue. `settle` false: the caller (take)
   * is making room for a send of its own and goes on with the site as it is.
   */
  const drop = (conn: Conn, settle = true): void => {
    if (conn.closed) return;
    conn.closed = true;
    clearTimeout(conn.idleTimer);
    const site = sites.get(conn.site);
    site?.conns.delete(conn);
    options.connectionsChanged?.(conn.site, -1);
    if (!settle) return;
    if (site && site.conns.size === 0 && site.waiting.length === 0) sites.delete(conn.site);
    else pump(conn.site);
  };

  const quit = (conn: Conn, settle = true): void => {
    if (conn.closed) return;
    try {
      conn.connection.quit();
    } catch {
      conn.connection.close();
    }
    // QUIT is answered and the socket ends; the slot is free now (the server's close is not waited for).
    drop(conn, settle);
  };

  const openConn = (send: PooledSend, key: string): Conn => {
    const plaintext = send.tls === 'opportunistic' && isPlaintext(send.target, send.source);
    const verified = send.tls === 'verified';
    const connection = new SMTPConnection({
      host: send.target.address,
      port: options.port,
      name: send.source?.ehlo ?? options.name,
      ...(send.source ? { localAddress: send.source.address } : {}),
      secure: false,
      // RFC 7435 opportunistic security: STARTTLS whenever offered, any certificate (MX certificates are often
      // self-signed or for another name), plain text when the server offers none or refuses it. MTA-STS enforce
      // (RFC 8461 4.2): STARTTLS required, the certificate verified for the MX host name, no plain text.
      ...(verified ? { requireTLS: true } : { opportunisticTLS: true, ignoreTLS: plaintext }),
      servername: send.target.exchange,
      tls: { rejectUnauthorized: verified, servername: send.target.exchange },
      ...SMTP_TIMEOUTS,
      logger: false,
    });
    const conn: Conn = {
      site: send.site,
      key,
      connection,
      ready: Promise.resolve(),
      busy: true,
      messages: 0,
      closed: false,
      idleTimer: undefined,
      tls: { version: null, verified: false },
    };
    conn.ready = new Promise<void>((resolve, reject) => {
      let settled = false;
      const settle = (err?: Error) => {
        if (settled) return;
        settled = true;
        if (err) reject(err);
        else resolve();
      };
      connection.on('error', (err: Error) => {
        settle(err);
        drop(conn);
      });
      connection.on('end', () => {
        settle(Object.assign(new Error('Connection closed unexpectedly'), { code: 'ECONNECTION' }));
        drop(conn);
      });
      connection.connect((err) => {
        if (err) {
          settle(err);
          drop(conn);
          return;
        }
        const socket = connection._socket as TLSSocket | null | false;
        if (connection.secure && socket) {
          conn.tls = { version: socket.getProtocol?.() ?? null, verified: socket.authorized === true };
        }
        settle();
      });
    });
    // The 'error' handler above answers it; this keeps an unawaited rejection from being reported.
    conn.ready.catch(() => {});
    siteOf(send.site).conns.add(conn);
    options.connectionsChanged?.(send.site, 1);
    return conn;
  };

  /** A connection for `send` now, or null: reuse an idle one of its key, open one, or close another key's idle one. */
  const take = (send: PooledSend, key: string): Conn | null => {
    const site = siteOf(send.site);
    for (const conn of site.conns) {
      if (!conn.busy && !conn.closed && conn.key === key) {
        conn.busy = true;
        clearTimeout(conn.idleTimer);
        return conn;
      }
    }
    const { connectionLimit } = options.shapeOf(send.site);
    if (site.conns.size >= connectionLimit) {
      const idle = [...site.conns].find((c) => !c.busy);
      if (!idle) return null;
      quit(idle, false);
      if (site.conns.size >= connectionLimit) return null;
    }
    return openConn(send, key);
  };

  /** Hands free room of `name` to the sends waiting there, in order. */
  function pump(name: string): void {
    const site = sites.get(name);
    if (!site) return;
    while (site.waiting.length > 0) {
      const waiter = site.waiting[0] as Waiter;
      const conn = take(waiter.send, waiter.key);
      if (!conn) return;
      site.waiting.shift();
      waiter.grant(conn);
    }
  }

  const acquire = (send: PooledSend): Promise<Conn> => {
    if (closed) return Promise.reject(closedError());
    const key = keyOf(send);
    const site = siteOf(send.site);
    if (site.waiting.length === 0) {
      const conn = take(send, key);
      if (conn) return Promise.resolve(conn);
    }
    if (site.waiting.length >= QUEUE_FACTOR * options.shapeOf(send.site).connectionLimit)
      return Promise.reject(new SiteQueueFull(send.site));
    return new Promise((grant, fail) => site.waiting.push({ send, key, grant, fail }));
  };

  const release = (conn: Conn, failed: boolean): void => {
    if (conn.closed) return;
    conn.messages++;
    conn.busy = false;
    const { messagesPerConnection } = options.shapeOf(conn.site);
    // After a failed transaction the session's state is the server's guess: a fresh connection is cheaper than RSET logic.
    if (closed || failed || conn.messages >= messagesPerConnection) return quit(conn);
    conn.idleTimer = setTimeout(() => quit(conn), options.idleMs);
    conn.idleTimer.unref();
    pump(conn.site);
  };

  const transact = async (conn: Conn, message: BuiltMessage): Promise<PooledResult> => {
    await conn.ready;
    const info = await new Promise<SMTPConnectionSendInfo>((resolve, reject) => {
      const stream = new Readable({ read() {} });
      stream.push(message.raw);
      stream.push(null);
      conn.connection.send(wireEnvelope(message.envelope), stream, (err, sent) => {
        if (err) reject(err);
        else resolve(sent as SMTPConnectionSendInfo);
      });
    });
    return { info, tls: conn.tls };
  };

  /** A reused connection the server dropped while idle fails before any reply: one retry on a new connection. */
  const droppedWhileIdle = (err: unknown, reused: boolean): boolean => {
    const e = err as { responseCode?: number; code?: string };
    return reused && e.responseCode === undefined && e.code === 'ECONNECTION';
  };

  return {
    async send(send, message) {
      for (let attempt = 0; ; attempt++) {
        const conn = await acquire(send);
        const reused = conn.messages > 0;
        try {
          const result = await transact(conn, message);
          release(conn, false);
          return result;
        } catch (err) {
          release(conn, true);
          if (attempt === 0 && droppedWhileIdle(err, reused)) continue;
          throw err;
        }
      }
    },
    usePlaintext(target, source) {
      if (closed) return;
      // Bounded however many hosts fail TLS: the ones whose time is up go first.
      if (plaintextUntil.size >= 10_000) {
        const now = Date.now();
        for (const [key, until] of plaintextUntil) if (until <= now) plaintextUntil.delete(key);
      }
      plaintextUntil.set(plainKey(target, source), Date.now() + options.idleMs);
      options.logger.info(
        { host: target.exchange, address: target.address, source: sourceOf(source) },
        'direct delivery: TLS handshake failed; sending in plain text',
      );
    },
    open: (site) =>
      site === undefined
        ? [...sites.values()].reduce((n, s) => n + s.conns.size, 0)
        : (sites.get(site)?.conns.size ?? 0),
    close() {
      closed = true;
      for (const site of sites.values()) {
        for (const waiter of site.waiting.splice(0)) waiter.fail(closedError());
        for (const conn of [...site.conns]) if (!conn.busy) quit(conn);
      }
    },
  };
}
