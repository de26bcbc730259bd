import { execFile } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * docker/healthcheck.js, the image's HEALTHCHECK, run as Docker runs it (a `node` process with the container's
 * environment) against a real HTTP server standing in for the service's probes.
 */
const script = path.resolve(import.meta.dirname, '../../docker/healthcheck.js');

let status = 200;
const seen: string[] = [];
const server = http.createServer((req, res) => {
  seen.push(req.url ?? '');
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(
    status === 200 ? '{"status":"ready"}' : '{"error":"unavailable","message":"not ready: database unreachable"}',
  );
});
let port: number;
let closedPort: number;

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
  // A port nothing listens on: taken, then released.
  const probe = http.createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  closedPort = (probe.address() as AddressInfo).port;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

function check(env: Record<string, string>, args: string[] = []): Promise<{ code: number; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [script, ...args],
      { env: { PATH: process.env.PATH ?? '', ...env }, timeout: 20_000 },
      (err, _stdout, stderr) => {
        resolve({ code: err ? ((err as { code?: number }).code ?? -1) : 0, stderr });
      },
    );
  });
}

describe('docker/healthcheck.js', () => {
  it('passes when the worker probe port answers /readyz with 200 (MAILER_ROLE=worker, MAILER_WORKER_PORT)', async () => {
    status = 200;
    seen.length = 0;
    const result = await check({
      MAILER_ROLE: 'worker',
      MAILER_WORKER_PORT: String(port),
      PORT: String(closedPort),
      HOST: '0.0.0.0',
    });
    expect(result).toEqual({ code: 0, stderr: '' });
    expect(seen).toEqual(['/readyz']);
  });

  it('fails when the API port answers /readyz with 503, saying why', async () => {
    status = 503;
    seen.length = 0;
    const result = await check({
      MAILER_ROLE: 'api',
      PORT: String(port),
      MAILER_WORKER_PORT: String(closedPort),
      HOST: '0.0.0.0',
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`http://127.0.0.1:${port}/readyz: 503`);
    expect(result.stderr).toContain('database unreachable');
    expect(seen).toEqual(['/readyz']);
  });

  it('checks the REST port in the `all` role (no MAILER_ROLE), and fails when nothing listens', async () => {
    status = 200;
    expect((await check({ PORT: String(port) })).code).toBe(0);
    const down = await check({ PORT: String(closedPort) });
    expect(down.code).toBe(1);
    expect(down.stderr).toContain(`http://127.0.0.1:${closedPort}/readyz`);
  });

  it('checks the URL it is given instead, as docker-compose.yml gives one per role', async () => {
    status = 200;
    seen.length = 0;
    expect(
      (
        await check({ MAILER_ROLE: 'worker', MAILER_WORKER_PORT: String(closedPort) }, [
          `http://127.0.0.1:${port}/readyz`,
        ])
      ).code,
    ).toBe(0);
    expect(seen).toEqual(['/readyz']);
  });
});
