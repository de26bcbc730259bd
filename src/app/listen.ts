import type { FastifyInstance, RawServerBase } from 'fastify';

/** Starts listening and answers the URL actually bound (port 0 picks a free port). */
export async function listen<S extends RawServerBase>(
  app: FastifyInstance<S>,
  host: string,
  port: number,
): Promise<string> {
  await app.listen({ host, port });
  const address = app.server.address();
  const actual = typeof address === 'object' && address ? address.port : port;
  return `http://${host.includes(':') ? `[${host}]` : host}:${actual}`;
}
