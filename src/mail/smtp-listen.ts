import type { AddressInfo } from 'node:net';
import type { SMTPServer } from 'smtp-server';

/** A listening SMTP server: its port (the one picked when asked for 0), its URL, and how to stop it. */
export interface Listening {
  port: number;
  url: string;
  close(): Promise<void>;
}

/**
 * Starts `server` on host:port; rejects when it cannot listen (the port taken), and afterwards hands the
 * server's errors (a client resetting its connection) to `onError` instead of crashing the process.
 */
export async function listenSmtp(server: SMTPServer, host: string, port: number, onError: (err: Error) => void): Promise<Listening> {
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
