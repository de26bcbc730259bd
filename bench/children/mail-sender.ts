import nodemailer from 'nodemailer';
import type { SendMailOptions } from 'nodemailer/lib/mailer';
import { parseConnectionUrl } from 'nodemailer/lib/shared';
import { EMAIL_REQUEST } from '../lib/payload.js';
import { serve } from './ipc.js';

/**
 * Baseline 3: raw nodemailer, pooled as the service's transport is (pool: true, the same maxConnections
 * and timeouts as src/mail/transport.ts), sending the message the service would compose from the bench
 * email to the sink, with `inFlight` sendMail calls outstanding (the pool queues the rest) for a fixed
 * time. No database, no Temporal: the ceiling of SMTP delivery from one Node process.
 */
interface RunArg {
  smtpUrl: string;
  maxConnections: number;
  inFlight: number;
  durationMs: number;
}

let seq = 0;
function message(): SendMailOptions {
  seq += 1;
  const id = `bench${process.pid}x${seq}`;
  return {
    from: EMAIL_REQUEST.from,
    to: EMAIL_REQUEST.to,
    subject: EMAIL_REQUEST.subject,
    html: EMAIL_REQUEST.html,
    text: EMAIL_REQUEST.text,
    messageId: `<${id}@example.com>`,
    date: new Date(),
    headers: { 'X-Mail-Email-Id': id },
    disableFileAccess: true,
    disableUrlAccess: true,
  };
}

async function run(arg: RunArg): Promise<{ sent: number; failed: number; elapsedMs: number; firstError?: string }> {
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
  const started = performance.now();
  const deadline = started + arg.durationMs;
  const lane = async () => {
    while (performance.now() < deadline) {
      try {
        await transporter.sendMail(message());
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
  return { sent, failed, elapsedMs, ...(firstError ? { firstError } : {}) };
}

serve({ run: (arg: RunArg) => run(arg) }, {});
