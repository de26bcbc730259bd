import net from 'node:net';
import { SMTPServer } from 'smtp-server';
import { DESTINATIONS } from './mx-zone.js';
import { onCleanup } from './lifecycle.js';

/**
 * The receiving side of the egress figure (issue 28): one SMTP server per destination site (mx.destN.test at
 * 127.0.0.(2+N), all on one port, MAILER_MX_PORT), in the bench process. Each counts what a receiver's
 * operator would see: connections open now and the most ever open at once, every MAIL FROM (an attempt) with
 * its time, and every message taken with its time, recipients and the address the client connected from.
 * A site can be told to answer `421 4.7.28` to most attempts, as Gmail does to a sender it finds too fast.
 */
export interface Taken {
  at: number;
  recipients: string[];
  source: string;
}

export interface SiteCounts {
  domain: string;
  open: number;
  maxOpen: number;
  attempts: number[];
  taken: Taken[];
  /** Every `every`-th attempt is let through; the others get the 421. 0: none refused. */
  throttleEvery: number;
  refusals: number;
}

export interface EgressHarness {
  port: number;
  sites: SiteCounts[];
  stop(): Promise<void>;
}

export const THROTTLE_REPLY = '4.7.28 Our system has detected an unusual rate of unsolicited mail (bench)';

async function freePort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, host, () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

function siteServer(counts: SiteCounts): SMTPServer {
  let seen = 0;
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    size: 10 * 1024 * 1024,
    onConnect(_session, done) {
      counts.open += 1;
      counts.maxOpen = Math.max(counts.maxOpen, counts.open);
      done();
    },
    onClose() {
      counts.open -= 1;
    },
    onMailFrom(_address, _session, done) {
      counts.attempts.push(Date.now());
      seen += 1;
      if (counts.throttleEvery > 0 && seen % counts.throttleEvery !== 0) {
        counts.refusals += 1;
        return done(Object.assign(new Error(THROTTLE_REPLY), { responseCode: 421 }));
      }
      done();
    },
    onData(stream, session, done) {
      stream.on('data', () => {});
      stream.on('end', () => {
        counts.taken.push({
          at: Date.now(),
          recipients: session.envelope.rcptTo.map((r) => r.address),
          source: session.remoteAddress.replace(/^::ffff:/, ''),
        });
        done();
      });
    },
  });
  // A client resetting its connection must not end the bench.
  server.on('error', () => {});
  return server;
}

export async function startEgressHarness(): Promise<EgressHarness> {
  const port = await freePort(DESTINATIONS[0]!.address);
  const sites: SiteCounts[] = DESTINATIONS.map((d) => ({
    domain: d.domain,
    open: 0,
    maxOpen: 0,
    attempts: [],
    taken: [],
    throttleEvery: 0,
    refusals: 0,
  }));
  const servers = sites.map(siteServer);
  await Promise.all(
    servers.map(
      (s, i) =>
        new Promise<void>((resolve, reject) => {
          s.once('error', reject);
          s.listen(port, DESTINATIONS[i]!.address, () => resolve());
        }),
    ),
  );
  const stop = onCleanup('stop the egress MX harness', async () => {
    await Promise.all(servers.map((s) => new Promise<void>((r) => s.close(() => r()))));
  });
  return { port, sites, stop };
}
