import { createPrivateKey, type KeyObject } from 'node:crypto';
import nodemailer from 'nodemailer';
import type { SendMailOptions } from 'nodemailer/lib/mailer';
import { parseConnectionUrl } from 'nodemailer/lib/shared';
import type { DkimKey, SignCost } from '../lib/dkim-key.js';
import { EMAIL_REQUEST } from '../lib/payload.js';
import { serve } from './ipc.js';

/**
 * Baseline 3: raw nodemailer, pooled as the service's transport is (pool: true, the timeouts of
 * src/delivery/transport/transport.ts; 8 connections, where the service's relay has 16), sending the message the service would compose from the bench
 * email to the sink, with `inFlight` sendMail calls outstanding (the pool queues the rest) for a fixed
 * time. No database, no Temporal: the ceiling of SMTP delivery from one Node process. With `dkim`, every
 * message is DKIM-signed as the service signs it (a per-message `dkim` option, src/delivery/message/compose.ts).
 *
 * `signCost` measures what signing alone costs: the same message built N times by a stream transport
 * (no network) with and without DKIM, and the process's CPU time for each.
 */
interface RunArg {
  smtpUrl: string;
  maxConnections: number;
  inFlight: number;
  /** Sends for this long; or, with `count`, sends exactly that many as fast as the pool takes them. */
  durationMs?: number;
  count?: number;
  /** Subjects `${subjectPrefix} <i>` (the sink tracks each one's arrival) instead of the bench email's. */
  subjectPrefix?: string;
  dkim?: DkimKey;
}

/**
 * The key as the service signs with it (src/delivery/dkim/dkim-key-object.ts): parsed once, not PEM text that OpenSSL
 * would decode on every message.
 */
type SigningKey = Omit<DkimKey, 'privateKey'> & { privateKey: KeyObject };
const parsedKey = (dkim: DkimKey | undefined): SigningKey | undefined =>
  dkim && { ...dkim, privateKey: createPrivateKey(dkim.privateKey) };

let seq = 0;
function message(dkim?: SigningKey, subject: string = EMAIL_REQUEST.subject): SendMailOptions {
  seq += 1;
  const id = `bench${process.pid}x${seq}`;
  return {
    from: EMAIL_REQUEST.from,
    to: EMAIL_REQUEST.to,
    subject,
    html: EMAIL_REQUEST.html,
    text: EMAIL_REQUEST.text,
    messageId: `<${id}@example.com>`,
    date: new Date(),
    headers: { 'X-Mail-Email-Id': id },
    disableFileAccess: true,
    disableUrlAccess: true,
    ...(dkim ? { dkim } : {}),
  };
}

async function run(
  arg: RunArg,
): Promise<{ sent: number; failed: number; elapsedMs: number; startedAt: number; firstError?: string }> {
  if (arg.durationMs === undefined && arg.count === undefined) throw new Error('run: give durationMs or count');
  const dkim = parsedKey(arg.dkim);
  const transporter = nodemailer.createTransport({
    ...(parseConnectionUrl(arg.smtpUrl) as Record<string, unknown>),
    pool: true,
    maxConnections: arg.maxConnections,
    maxMessages: Infinity,
    connectionTimeout: 10_000,
    greetingTimeout: 10_000,
    socketTimeout: 30_000,
    logger: false,
  });
  let sent = 0;
  let failed = 0;
  let firstError: string | undefined;
  // The wall clock (the sink's) at the first send: a counted run is timed from it to its last arrival.
  const startedAt = Date.now();
  const started = performance.now();
  const deadline = started + (arg.durationMs ?? Infinity);
  let next = 0;
  const more = () => (arg.count !== undefined ? next < arg.count : performance.now() < deadline);
  const lane = async () => {
    while (more()) {
      const i = next++;
      try {
        await transporter.sendMail(
          message(dkim, arg.subjectPrefix !== undefined ? `${arg.subjectPrefix} ${i}` : undefined),
        );
        sent += 1;
      } catch (err) {
        failed += 1;
        firstError ??= (err as Error).message;
      }
    }
  };
  await Promise.all(Array.from({ length: arg.inFlight }, lane));
  const elapsedMs = performance.now() - started;
  transporter.close();
  return { sent, failed, elapsedMs, startedAt, ...(firstError ? { firstError } : {}) };
}

/** CPU ms (user + system, all threads of this process) and wall ms to build `n` messages, one at a time. */
async function build(n: number, dkim?: SigningKey): Promise<{ cpuMs: number; wallMs: number; bytes: number }> {
  const transporter = nodemailer.createTransport({ streamTransport: true, buffer: true });
  let bytes = 0;
  const wall = performance.now();
  const cpu = process.cpuUsage();
  for (let i = 0; i < n; i += 1) {
    const info = await transporter.sendMail(message(dkim));
    bytes += (info.message as Buffer).length;
  }
  const used = process.cpuUsage(cpu);
  return { cpuMs: (used.user + used.system) / 1000, wallMs: performance.now() - wall, bytes: bytes / n };
}

/**
 * `rounds` alternating blocks of `n` unsigned and `n` signed builds after a warm-up of each (JIT, key
 * parsing): alternating keeps a change of machine load from landing on one side only.
 */
async function signCost({ n, rounds, dkim: given }: { n: number; rounds: number; dkim: DkimKey }): Promise<SignCost> {
  const dkim = parsedKey(given)!;
  await build(100);
  await build(100, dkim);
  const sum = { u: { cpuMs: 0, wallMs: 0, bytes: 0 }, s: { cpuMs: 0, wallMs: 0, bytes: 0 } };
  for (let r = 0; r < rounds; r += 1) {
    for (const [side, key] of [
      ['u', undefined],
      ['s', dkim],
    ] as const) {
      const b = await build(n, key);
      sum[side].cpuMs += b.cpuMs;
      sum[side].wallMs += b.wallMs;
      sum[side].bytes = b.bytes;
    }
  }
  const messages = n * rounds;
  const per = (x: number) => Math.round((x / messages) * 1000) / 1000;
  return {
    messages,
    unsignedCpuMs: per(sum.u.cpuMs),
    signedCpuMs: per(sum.s.cpuMs),
    signCpuMs: per(sum.s.cpuMs - sum.u.cpuMs),
    unsignedWallMs: per(sum.u.wallMs),
    signedWallMs: per(sum.s.wallMs),
    unsignedBytes: Math.round(sum.u.bytes),
    signedBytes: Math.round(sum.s.bytes),
  };
}

serve(
  { run: (arg: RunArg) => run(arg), signCost: (arg: { n: number; rounds: number; dkim: DkimKey }) => signCost(arg) },
  {},
);
