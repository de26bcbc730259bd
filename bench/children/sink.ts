import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { SINK_SERVER_OPTIONS } from '../../test/helpers/smtp-sink.js';
import { serve } from './ipc.js';

/**
 * The receiving mail server of every SMTP measurement, in a process of its own so that receiving mail
 * does not share the load generator's event loop. The same smtp-server setup as test/helpers/smtp-sink.ts
 * with `parse: false` (a message counts once the server accepted it), but it keeps only counts and
 * Message-IDs, and it survives a client resetting its connection (the test helper has no 'error'
 * listener, so a sender killed mid-session would crash it).
 *
 * Messages whose Subject starts with `[bench ` (the batch and scheduled figures) are also tracked one by
 * one: the wall-clock time (Date.now(), the clock the service schedules by) each was received, per
 * subject, so that latency and lateness are taken where the message arrives, not when the bench learns of it.
 *
 * For the deliverability figure it also listens, on request, on more loopback addresses at the same port
 * (the MX hosts of the destination domains), and counts which address received mail for which recipient
 * domain and how many messages carried a DKIM-Signature header.
 */
const TRACKED = '[bench ';

let total = 0;
let duplicates = 0;
const seen = new Set<string>();
/** Subject → arrival times (ms since the epoch), tracked subjects only. */
const arrivals = new Map<string, number[]>();

interface Waiter {
  prefix: string;
  /** Distinct subjects with the prefix still to come. */
  missing: number;
  resolve: () => void;
}
const waiters = new Set<Waiter>();

/** Distinct tracked subjects with this prefix, all their arrivals, and the first and last first-arrival. */
function summary(prefix: string): { distinct: number; total: number; firstAt: number | null; lastAt: number | null } {
  let distinct = 0;
  let all = 0;
  let firstAt = Infinity;
  let lastAt = -Infinity;
  for (const [subject, times] of arrivals) {
    if (!subject.startsWith(prefix)) continue;
    distinct += 1;
    all += times.length;
    firstAt = Math.min(firstAt, times[0]!);
    lastAt = Math.max(lastAt, times[0]!);
  }
  return { distinct, total: all, firstAt: distinct > 0 ? firstAt : null, lastAt: distinct > 0 ? lastAt : null };
}

function distinctWith(prefix: string): number {
  let n = 0;
  for (const subject of arrivals.keys()) if (subject.startsWith(prefix)) n += 1;
  return n;
}

/** Messages per listening address and recipient domain (`<address> <domain>`): which MX host got whose mail. */
const routes = new Map<string, number>();
let signed = 0;

/** Counts one accepted message: totals, duplicates, DKIM signatures, its route, and its arrival when tracked. */
function received(message: Buffer, listener: string, recipients: string[]): void {
  const at = Date.now();
  const head = message.subarray(0, 8192).toString('latin1');
  const headerEnd = head.indexOf('\r\n\r\n');
  const headers = headerEnd >= 0 ? head.slice(0, headerEnd) : head;
  const messageId = /^message-id:\s*(\S+)/im.exec(headers)?.[1] ?? '';
  total += 1;
  if (/^dkim-signature:/im.test(headers)) signed += 1;
  for (const domain of new Set(recipients.map((r) => r.slice(r.lastIndexOf('@') + 1).toLowerCase()))) {
    const key = `${listener} ${domain}`;
    routes.set(key, (routes.get(key) ?? 0) + 1);
  }
  if (messageId !== '') {
    if (seen.has(messageId)) duplicates += 1;
    else seen.add(messageId);
  }
  const subject = /^subject: ?(.*)$/im.exec(headers)?.[1]?.trimEnd();
  if (!subject?.startsWith(TRACKED)) return;
  const times = arrivals.get(subject);
  if (times) times.push(at);
  else {
    arrivals.set(subject, [at]);
    for (const w of waiters) {
      if (subject.startsWith(w.prefix) && --w.missing <= 0) w.resolve();
    }
  }
}

/** A receiving SMTP server on one address; every one counts into the same totals. */
function createServer(listener: string): SMTPServer {
  const server = new SMTPServer({
    ...SINK_SERVER_OPTIONS,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        received(
          Buffer.concat(chunks),
          listener,
          session.envelope.rcptTo.map((r) => r.address),
        );
        callback();
      });
    },
  });
  server.on('error', (err: Error & { remoteAddress?: string }) => {
    // A sender that goes away mid-session (the service stopping) is not the sink's problem: smtp-server
    // marks a connection's errors with its remote address. Anything else is the sink's, and said.
    if (err.remoteAddress === undefined) process.stderr.write(`bench smtp sink (${listener}): ${err.message}\n`);
  });
  return server;
}

function listen(server: SMTPServer, address: string, port: number): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    server.server.once('error', reject);
    server.listen(port, address, () => {
      server.server.off('error', reject);
      resolve((server.server.address() as AddressInfo).port);
    });
  });
}

const servers = [createServer('127.0.0.1')];
const port = await listen(servers[0]!, '127.0.0.1', 0);

/**
 * Listens on more loopback addresses at the sink's port, each standing in for a destination's MX host
 * (direct delivery connects to the address DNS gives at MAILER_MX_PORT). Linux routes all of 127/8 to
 * the loopback interface, so 127.0.0.2 and up need no setup.
 */
async function listenMx({ addresses }: { addresses: string[] }): Promise<{ port: number; addresses: string[] }> {
  for (const address of addresses) {
    const server = createServer(address);
    await listen(server, address, port);
    servers.push(server);
  }
  return { port, addresses };
}

/** Messages per listening address, and per address and recipient domain. */
function byRoute(): { byAddress: Record<string, number>; routes: Record<string, number> } {
  const byAddress: Record<string, number> = {};
  for (const [key, n] of routes) {
    const address = key.slice(0, key.indexOf(' '));
    byAddress[address] = (byAddress[address] ?? 0) + n;
  }
  return { byAddress, routes: Object.fromEntries(routes) };
}

serve(
  {
    count: () => ({ total, duplicates, signed }),
    /** Messages by the address they arrived at and by recipient domain (a message to two domains counts for each). */
    routes: () => byRoute(),
    listenMx,
    /** Answers once `count` distinct subjects with `prefix` have arrived, or after `timeoutMs`. */
    waitFor: async ({ prefix, count, timeoutMs }: { prefix: string; count: number; timeoutMs: number }) => {
      const missing = count - distinctWith(prefix);
      if (missing > 0) {
        await new Promise<void>((resolve) => {
          const w: Waiter = { prefix, missing, resolve: () => done() };
          const timer = setTimeout(() => done(), timeoutMs);
          function done() {
            clearTimeout(timer);
            waiters.delete(w);
            resolve();
          }
          waiters.add(w);
        });
      }
      return summary(prefix);
    },
    summary: ({ prefix }: { prefix: string }) => summary(prefix),
    /** Every tracked subject with `prefix` and its arrival times. */
    arrivals: ({ prefix }: { prefix: string }) => [...arrivals].filter(([s]) => s.startsWith(prefix)),
  },
  { url: `smtp://127.0.0.1:${port}` },
  () => Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve())))).then(() => undefined),
);
