#!/usr/bin/env node
/* global fetch, AbortSignal */
// The image's HEALTHCHECK (and docker-compose.yml's): exits 0 when the process's `/readyz` answers 200, 1
// otherwise. Which port depends on the role, as the process itself decides (src/config.ts): a worker serves
// its probes on MAILER_WORKER_PORT, an api or all process on the REST port (PORT). `node docker/healthcheck.js
// URL` checks that URL instead. Plain JavaScript with no dependency; it gives up after 2.5 s, within the
// 3 s timeout the HEALTHCHECKs give it.
const env = process.env;

function probeUrl() {
  if (process.argv[2]) return process.argv[2];
  const port = env.MAILER_ROLE === 'worker' ? env.MAILER_WORKER_PORT || '8082' : env.PORT || '8080';
  // A wildcard address is where the process listens, not one to connect to.
  const host = !env.HOST || env.HOST === '0.0.0.0' || env.HOST === '::' ? '127.0.0.1' : env.HOST;
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}/readyz`;
}

const url = probeUrl();
try {
  const res = await fetch(url, { signal: AbortSignal.timeout(2500) });
  if (!res.ok) console.error(`${url}: ${res.status} ${(await res.text()).slice(0, 200)}`);
  process.exit(res.ok ? 0 : 1);
} catch (err) {
  console.error(`${url}: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
}
