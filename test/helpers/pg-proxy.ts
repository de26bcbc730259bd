import net from 'node:net';
import type { AddressInfo } from 'node:net';

/**
 * A TCP proxy between the service and PostgreSQL that can lose the answer to one statement, as a database
 * crash or a cut network does. Armed with a marker (text the statement's parameters carry, e.g. an email's
 * subject), it acts on the first client message holding it:
 * - `lose-answer`: forwards the statement, relays nothing more from the server, and cuts both sides once the
 *   server has had time to commit: the statement committed, the client never hears so;
 * - `drop`: cuts both sides without forwarding it: nothing was committed, the client cannot tell either.
 */
export interface PgProxy {
  /** `databaseUrl` with its host and port replaced by the proxy's. */
  url: string;
  /** Acts on the next statement carrying `marker`; resolves once the connection has been cut. */
  arm(marker: string, mode: 'lose-answer' | 'drop'): Promise<void>;
  close(): Promise<void>;
}

/** Time the server is given to run and commit the forwarded statement before the connection is cut. */
const COMMIT_TIME_MS = 500;

export async function startPgProxy(databaseUrl: string): Promise<PgProxy> {
  const target = new URL(databaseUrl);
  const sockets = new Set<net.Socket>();
  let armed: { marker: Buffer; mode: 'lose-answer' | 'drop'; done: () => void } | undefined;

  const server = net.createServer((client) => {
    const upstream = net.connect(Number(target.port), target.hostname);
    sockets.add(client).add(upstream);
    let relayAnswers = true;
    const cut = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('data', (chunk: Buffer) => {
      const trap = armed;
      if (!trap || !chunk.includes(trap.marker)) {
        upstream.write(chunk);
        return;
      }
      armed = undefined;
      if (trap.mode === 'drop') {
        cut();
        trap.done();
        return;
      }
      relayAnswers = false;
      upstream.write(chunk);
      setTimeout(() => {
        cut();
        trap.done();
      }, COMMIT_TIME_MS);
    });
    upstream.on('data', (chunk: Buffer) => {
      if (relayAnswers) client.write(chunk);
    });
    client.on('error', cut).on('close', () => upstream.end());
    upstream.on('error', cut).on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = new URL(databaseUrl);
  url.hostname = '127.0.0.1';
  url.port = String((server.address() as AddressInfo).port);
  return {
    url: url.toString(),
    arm: (marker, mode) =>
      new Promise<void>((done) => {
        armed = { marker: Buffer.from(marker), mode, done };
      }),
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
