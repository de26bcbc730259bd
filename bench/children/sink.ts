import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
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

const server = new SMTPServer({
  authOptional: true,
  disabledCommands: ['STARTTLS'],
  logger: false,
  size: 64 * 1024 * 1024,
  onData(stream, _session, callback) {
    const chunks: Buffer[] = [];
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('end', () => {
      const at = Date.now();
      const head = Buffer.concat(chunks).subarray(0, 8192).toString('latin1');
      const messageId = /^message-id:\s*(\S+)/im.exec(head)?.[1] ?? '';
      total += 1;
      if (messageId !== '') {
        if (seen.has(messageId)) duplicates += 1;
        else seen.add(messageId);
      }
      const subject = /^subject: ?(.*)$/im.exec(head)?.[1]?.trimEnd();
      if (subject?.startsWith(TRACKED)) {
        const times = arrivals.get(subject);
        if (times) times.push(at);
        else {
          arrivals.set(subject, [at]);
          for (const w of waiters) {
            if (subject.startsWith(w.prefix) && --w.missing <= 0) w.resolve();
          }
        }
      }
      callback();
    });
  },
});
server.on('error', (err: Error & { remoteAddress?: string }) => {
  // A sender that goes away mid-session (the service stopping) is not the sink's problem: smtp-server
  // marks a connection's errors with its remote address. Anything else is the sink's, and said.
  if (err.remoteAddress === undefined) process.stderr.write(`bench smtp sink: ${err.message}\n`);
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
const { port } = server.server.address() as AddressInfo;

serve(
  {
    count: () => ({ total, duplicates }),
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
  () => new Promise<void>((resolve) => server.close(() => resolve())),
);
