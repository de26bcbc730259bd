import net from 'node:net';
import type { AddressInfo } from 'node:net';

/**
 * A TCP proxy between a service process and PostgreSQL that can take the database away, as a restart does
 * from the client's side (`pg_ctl restart -m immediate`): every connection is cut at once, whatever it was
 * doing (a statement may have committed and its answer be lost, or not have reached the server), and new
 * connections are refused until the database is "back". The shared test PostgreSQL itself stays up for the
 * other test files.
 */
export interface PgOutageProxy {
  /** `databaseUrl` with its host and port replaced by the proxy's. */
  url: string;
  /** Connections relayed now. */
  connections(): number;
  /** Cuts every connection and refuses new ones until back(). */
  down(): void;
  back(): void;
  close(): Promise<void>;
}

export async function startPgOutageProxy(databaseUrl: string): Promise<PgOutageProxy> {
  const target = new URL(databaseUrl);
  const pairs = new Set<{ client: net.Socket; upstream: net.Socket }>();
  let isDown = false;

  const server = net.createServer((client) => {
    if (isDown) {
      // A server that is not listening yet: the connect fails at once.
      client.resetAndDestroy();
      return;
    }
    const upstream = net.connect(Number(target.port), target.hostname);
    const pair = { client, upstream };
    pairs.add(pair);
    const cut = () => {
      pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.pipe(upstream);
    upstream.pipe(client);
    client.on('error', cut).on('close', cut);
    upstream.on('error', cut).on('close', cut);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = new URL(databaseUrl);
  url.hostname = '127.0.0.1';
  url.port = String((server.address() as AddressInfo).port);
  const cutAll = () => {
    for (const { client, upstream } of pairs) {
      // RST to the service, as a server process killed mid-statement; the backend sees its client gone.
      client.resetAndDestroy();
      upstream.destroy();
    }
    pairs.clear();
  };
  return {
    url: url.toString(),
    connections: () => pairs.size,
    down: () => {
      isDown = true;
      cutAll();
    },
    back: () => {
      isDown = false;
    },
    close: async () => {
      cutAll();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
