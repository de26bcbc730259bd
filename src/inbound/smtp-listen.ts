import type { AddressInfo, Socket } from 'node:net';
import type { SMTPServer, SMTPServerDataStream, SMTPServerSession } from 'smtp-server';
import { withLogFields } from '../telemetry/log-context.js';

/** A listening SMTP server: its port (the one picked when asked for 0), its URL, and how to stop it. */
export interface Listening {
  port: number;
  url: string;
  close(): Promise<void>;
}

/** Runs `fn` with the SMTP connection's id (smtp-server's session id) on every log line its work writes. */
export function inSession<T>(session: SMTPServerSession, fn: () => T): T {
  return withLogFields({ smtpSession: session.id }, fn);
}

/**
 * Starts `server` on host:port; rejects when it cannot listen (the port taken), and afterwards hands the
 * server's errors (a client resetting its connection) to `onError` instead of crashing the process.
 */
export async function listenSmtp(
  server: SMTPServer,
  host: string,
  port: number,
  onError: (err: Error) => void,
): Promise<Listening> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  server.on('error', onError);
  const bound = (server.server.address() as AddressInfo).port;
  return {
    port: bound,
    url: `smtp://${host.includes(':') ? `[${host}]` : host}:${bound}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * A message's bytes from smtp-server's DATA stream, or undefined when it is larger than `maxBytes` (nothing
 * past the limit is kept: the stream is read to its end so the session can answer 552 and go on).
 */
export function readMessage(stream: SMTPServerDataStream, maxBytes: number): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    stream.on('data', (c: Buffer) => {
      size += c.length;
      if (size <= maxBytes) chunks.push(c);
    });
    stream.on('error', reject);
    stream.on('end', () => {
      const exceeded = stream.sizeExceeded === true || size > maxBytes;
      resolve(exceeded ? undefined : Buffer.concat(chunks));
    });
  });
}

/** Ends every connection after `maxMs` however it trickles its bytes (smtp-server's own timeout is for silence only). */
export function limitSessions(server: SMTPServer, maxMs: number): void {
  server.server.on('connection', (socket: Socket) => {
    const timer = setTimeout(() => socket.destroy(), maxMs);
    timer.unref();
    socket.once('close', () => clearTimeout(timer));
  });
}
