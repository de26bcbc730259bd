import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isDatabaseUnavailable } from '../../src/db/db-unavailable.js';
import { DEFAULT_CONNECT_TIMEOUT_SECONDS, createSql } from '../../src/db/sql.js';

// A server that takes the TCP connect and never answers: what a stopped or swamped PostgreSQL looks like.
let silent: net.Server;
let port: number;
const sockets = new Set<net.Socket>();

beforeAll(async () => {
  silent = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  port = (silent.address() as net.AddressInfo).port;
});

afterAll(async () => {
  for (const s of sockets) s.destroy();
  await new Promise((resolve) => silent.close(resolve));
});

async function timeToFail(url: string): Promise<{ ms: number; err: unknown }> {
  const sql = createSql(url, { max: 1 });
  const started = performance.now();
  try {
    await sql`select 1`;
    throw new Error('a silent server answered');
  } catch (err) {
    return { ms: performance.now() - started, err };
  } finally {
    await sql.end({ timeout: 0 });
  }
}

describe('a database that takes the connect but does not answer', () => {
  it('fails the statement as unavailable after the default connect timeout, not the driver’s 30 s', async () => {
    const { ms, err } = await timeToFail(`postgres://u:p@127.0.0.1:${port}/db`);
    expect((err as { code?: string }).code).toBe('CONNECT_TIMEOUT');
    expect(isDatabaseUnavailable(err)).toBe(true);
    expect(ms).toBeGreaterThanOrEqual(DEFAULT_CONNECT_TIMEOUT_SECONDS * 1000 - 50);
    expect(ms).toBeLessThan(DEFAULT_CONNECT_TIMEOUT_SECONDS * 1000 + 1_000);
  });

  it('takes the URL’s connect_timeout instead when it sets one', async () => {
    const { ms, err } = await timeToFail(`postgres://u:p@127.0.0.1:${port}/db?connect_timeout=1`);
    expect((err as { code?: string }).code).toBe('CONNECT_TIMEOUT');
    expect(ms).toBeGreaterThanOrEqual(950);
    expect(ms).toBeLessThan(DEFAULT_CONNECT_TIMEOUT_SECONDS * 1000 - 200);
  });
});
