import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';

/**
 * Ports are drawn from below the kernel's ephemeral range. A port from `listen(0)` is one of the ephemeral
 * ports every outgoing connection on the machine takes its local port from: between the answer and the bind
 * of the process it is for, a connection to PostgreSQL or Temporal, from any test file, could take it (a CI
 * run: a worker's probe port refused with EADDRINUSE). The kernel hands out no port below the range.
 */
const LOWEST = 10_000;
const EPHEMERAL_LOW = ephemeralLow();

function ephemeralLow(): number {
  try {
    const low = Number(fs.readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return low > LOWEST + 2_000 ? low : 32_768;
  } catch {
    return 32_768; // Linux's default
  }
}

/** Whether `port` could be listened on at loopback just now. */
function isFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });
}

/** A TCP port free on loopback right now, which no outgoing connection will take meanwhile. */
export async function freePort(): Promise<number> {
  for (let tries = 0; tries < 100; tries++) {
    const port = LOWEST + crypto.randomInt(EPHEMERAL_LOW - LOWEST);
    if (await isFree(port)) return port;
  }
  throw new Error(`no free port between ${LOWEST} and ${EPHEMERAL_LOW} in 100 tries`);
}
