import { readFileSync } from 'node:fs';
import { SMTPServer, type SMTPServerSession } from 'smtp-server';
import { freePort } from './ports.js';

/** A self-signed certificate for CN=mx.test (test/fixtures/tls), what many real MX hosts present. */
export const MX_TLS = {
  key: readFileSync(new URL('../fixtures/tls/mx-key.pem', import.meta.url)),
  cert: readFileSync(new URL('../fixtures/tls/mx-cert.pem', import.meta.url)),
};

/** A message as one MX host took it, with how the session looked. */
export interface MxDelivery {
  envelopeFrom: string;
  envelopeTo: string[];
  raw: Buffer;
  /** The session was upgraded with STARTTLS. */
  secure: boolean;
  /** The TLS server name (SNI) the client asked for. */
  servername: string | undefined;
  /** The name the client gave in EHLO. */
  ehlo: string;
  /** The address the client connected from (its bound source address). */
  source: string;
}

/** An SMTP reply such as `550 5.1.1 no such user`, to refuse with; undefined accepts. */
type Reply = string | undefined;

export interface MxHostSpec {
  address: string;
  /** STARTTLS offered with this certificate (and TLS options); absent: STARTTLS not offered. */
  tls?: { key: Buffer; cert: Buffer; maxVersion?: 'TLSv1' | 'TLSv1.2' | 'TLSv1.3'; minVersion?: 'TLSv1' | 'TLSv1.2' };
  mailFrom?: (from: string) => Reply;
  rcptTo?: (to: string) => Reply;
  /** Called with each complete message; may wait, and may refuse it. */
  data?: (raw: Buffer) => Promise<Reply> | Reply;
}

export interface MxHost {
  address: string;
  received: MxDelivery[];
  /** Connections accepted so far. */
  connections: number;
  /** Connections open now, and the most ever open at once. */
  open: number;
  maxOpen: number;
}

function replyError(reply: string): Error {
  return Object.assign(new Error(reply.slice(4)), { responseCode: Number(reply.slice(0, 3)) });
}

function startHost(spec: MxHostSpec, port: number): Promise<{ host: MxHost; server: SMTPServer }> {
  const host: MxHost = { address: spec.address, received: [], connections: 0, open: 0, maxOpen: 0 };
  const server = new SMTPServer({
    logger: false,
    authOptional: true,
    // Tests close the transport first; whatever connection is left is cut after a second, not thirty.
    closeTimeout: 1000,
    ...(spec.tls ? { ...spec.tls } : { disabledCommands: ['STARTTLS'] }),
    onConnect(_session, callback) {
      host.connections++;
      host.open++;
      host.maxOpen = Math.max(host.maxOpen, host.open);
      callback();
    },
    onClose() {
      host.open--;
    },
    onMailFrom(from, _session, callback) {
      const reply = spec.mailFrom?.(from.address);
      callback(reply ? replyError(reply) : undefined);
    },
    onRcptTo(to, _session, callback) {
      const reply = spec.rcptTo?.(to.address);
      callback(reply ? replyError(reply) : undefined);
    },
    onData(stream, session: SMTPServerSession, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const raw = Buffer.concat(chunks);
        Promise.resolve(spec.data?.(raw)).then(
          (reply) => {
            if (reply) return callback(replyError(reply));
            host.received.push({
              envelopeFrom: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
              envelopeTo: session.envelope.rcptTo.map((r) => r.address),
              raw,
              secure: session.secure,
              servername: (session as { servername?: string }).servername,
              ehlo: session.hostNameAppearsAs,
              source: session.remoteAddress.replace(/^::ffff:/, ''),
            });
            callback();
          },
          (err: Error) => callback(err),
        );
      });
    },
  });
  // A client that drops a connection (a failed TLS handshake, a closed pool) is not the test's failure.
  server.on('error', () => {});
  return new Promise((resolve, reject) => {
    server.server.once('error', reject);
    server.listen(port, spec.address, () => resolve({ host, server }));
  });
}

export interface MxNetwork {
  /** The one port every host listens on (the transport's MAILER_MX_PORT). */
  port: number;
  hosts: MxHost[];
  close(): Promise<void>;
}

/**
 * SMTP servers standing in for MX hosts, one per loopback address (127.0.0.2, ...), all on one port, each
 * answering through hooks fixed at start: the transport's own tests. The end-to-end tests use mx-hosts.ts,
 * whose hosts switch behaviour at run time and record what a receiving system would judge.
 */
export async function startMxHosts(specs: MxHostSpec[]): Promise<MxNetwork> {
  for (let attempt = 0; ; attempt++) {
    const port = await freePort();
    const started: { host: MxHost; server: SMTPServer }[] = [];
    try {
      for (const spec of specs) started.push(await startHost(spec, port));
    } catch (err) {
      await Promise.all(started.map(({ server }) => new Promise((r) => server.close(() => r(undefined)))));
      if (attempt < 5 && (err as NodeJS.ErrnoException).code === 'EADDRINUSE') continue;
      throw err;
    }
    return {
      port,
      hosts: started.map((s) => s.host),
      close: () =>
        Promise.all(started.map(({ server }) => new Promise<void>((r) => server.close(() => r())))).then(
          () => undefined,
        ),
    };
  }
}
