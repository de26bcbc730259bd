/**
 * Receiving mail servers (smtp-server) standing in for the MX hosts of recipient domains: one per loopback
 * address (127.0.0.2, 127.0.0.3, ...), all on one port, because direct delivery connects to every MX on
 * the same port (MAILER_MX_PORT). Each host's behaviour can be switched while a test runs, and each keeps
 * what it received with what a receiving server knows of the sender: envelope, address, EHLO name, TLS.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { SMTPServer, type SMTPServerSession } from 'smtp-server';

/**
 * - `accept`: takes every recipient and message;
 * - `refuse`: refuses every recipient with 550 5.1.1 (no such user);
 * - `greylist`: answers 451 4.7.1 to the first attempt of each envelope sender and recipient, accepts later;
 * - `down`: not listening (connections are refused).
 */
export type MxBehaviour = 'accept' | 'refuse' | 'greylist' | 'down';

/** A message as an MX host accepted it. */
export interface MxMessage {
  host: string;
  envelopeFrom: string;
  envelopeTo: string[];
  remoteAddress: string;
  /** The name the client gave in EHLO/HELO. */
  helo: string;
  /** Whether the session was under TLS (STARTTLS) when the message came. */
  secure: boolean;
  raw: Buffer;
  /** The reply the host gave to the message, e.g. `250 2.0.0 Ok: queued as ...`. */
  reply: string;
}

/** One RCPT TO the host answered, accepted or not. */
export interface MxRcptAttempt {
  host: string;
  envelopeFrom: string;
  recipient: string;
  reply: string;
  at: number;
}

export interface MxHost {
  /** The loopback address it listens on. */
  ip: string;
  readonly behaviour: MxBehaviour;
  /** Switches the behaviour; resolves once the host listens (or has stopped listening) accordingly. */
  setBehaviour(behaviour: MxBehaviour): Promise<void>;
  /** Offer STARTTLS (with the self-signed certificate of test/fixtures/tls); on by default. */
  tls: boolean;
  /** A reply (e.g. `550 5.1.1 no such user`) refusing one recipient, or undefined; beside `behaviour`. */
  refuseRecipient: (address: string) => string | undefined;
  messages: MxMessage[];
  attempts: MxRcptAttempt[];
  /** Connections opened to it, whatever came of them. */
  connections: number;
}

export interface MxHosts {
  port: number;
  hosts: MxHost[];
  host(ip: string): MxHost;
  /** Every message any host accepted, in arrival order. */
  messages(): MxMessage[];
  /** Waits until a message matching `match` has arrived at some host. */
  waitForMessage(match: (m: MxMessage) => boolean, timeoutMs?: number): Promise<MxMessage>;
  /** Every host back to `accept`, with STARTTLS, no per-recipient refusal. */
  reset(): Promise<void>;
  close(): Promise<void>;
}

const FIXTURES = path.join(import.meta.dirname, '../fixtures/tls');
const TLS_KEY = fs.readFileSync(path.join(FIXTURES, 'mx-key.pem'));
const TLS_CERT = fs.readFileSync(path.join(FIXTURES, 'mx-cert.pem'));

const smtpError = (reply: string) =>
  Object.assign(new Error(reply.slice(4)), { responseCode: Number(reply.slice(0, 3)) });

/** Whether `port` can be bound on every one of `ips` right now. */
async function freeOnAll(ips: string[], port: number): Promise<boolean> {
  const servers: net.Server[] = [];
  try {
    for (const ip of ips) {
      const srv = net.createServer();
      servers.push(srv);
      await new Promise<void>((resolve, reject) => {
        srv.once('error', reject);
        srv.listen(port, ip, () => resolve());
      });
    }
    return true;
  } catch {
    return false;
  } finally {
    await Promise.all(servers.map((s) => new Promise((r) => (s.listening ? s.close(r) : r(undefined)))));
  }
}

/** A port free on every address: taken from the first address's free ports, tried on the others. */
async function portFreeOnAll(ips: string[]): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const probe = net.createServer();
    const port = await new Promise<number>((resolve, reject) => {
      probe.once('error', reject);
      probe.listen(0, ips[0], () => resolve((probe.address() as net.AddressInfo).port));
    });
    await new Promise((r) => probe.close(r));
    if (await freeOnAll(ips, port)) return port;
  }
  throw new Error(`no port free on all of ${ips.join(', ')}`);
}

interface HostState {
  host: MxHost;
  server: SMTPServer;
  greylisted: Set<string>;
}

/** The reply to a recipient under the host's behaviour, or undefined to accept it. */
function rcptReply(state: HostState, from: string, to: string): string | undefined {
  const { host } = state;
  const own = host.refuseRecipient(to);
  if (own) return own;
  if (host.behaviour === 'refuse') return `550 5.1.1 <${to}>: Recipient address rejected: User unknown`;
  if (host.behaviour === 'greylist') {
    const triplet = `${from.toLowerCase()} ${to.toLowerCase()}`;
    if (!state.greylisted.has(triplet)) {
      state.greylisted.add(triplet);
      return `451 4.7.1 <${to}>: Recipient address rejected: Greylisted, please try again later`;
    }
  }
  return undefined;
}

function createHostServer(state: HostState): SMTPServer {
  const { host } = state;
  const mailFrom = (session: SMTPServerSession) => (session.envelope.mailFrom ? session.envelope.mailFrom.address : '');
  const server = new SMTPServer({
    name: `mx.${host.ip}.test`,
    authOptional: true,
    logger: false,
    key: TLS_KEY,
    cert: TLS_CERT,
    hideSTARTTLS: !host.tls,
    size: 64 * 1024 * 1024,
    onConnect(_session, callback) {
      host.connections += 1;
      callback();
    },
    onRcptTo(address, session, callback) {
      const reply = rcptReply(state, mailFrom(session), address.address);
      host.attempts.push({
        host: host.ip,
        envelopeFrom: mailFrom(session),
        recipient: address.address,
        reply: reply ?? '250 Accepted',
        at: Date.now(),
      });
      callback(reply ? smtpError(reply) : undefined);
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const text = `2.0.0 Ok: queued as ${crypto.randomBytes(5).toString('hex').toUpperCase()} at ${host.ip}`;
        host.messages.push({
          host: host.ip,
          envelopeFrom: mailFrom(session),
          envelopeTo: session.envelope.rcptTo.map((r) => r.address),
          remoteAddress: session.remoteAddress,
          helo: session.hostNameAppearsAs,
          secure: session.secure,
          raw: Buffer.concat(chunks),
          reply: `250 ${text}`,
        });
        callback(null, text);
      });
    },
  });
  // A sender that goes away mid-session is not an error of the receiving host.
  server.on('error', () => {});
  return server;
}

/** Makes a host's listening match its behaviour: `down` closes the listening socket, anything else opens it. */
function applyListening(state: HostState, port: number): Promise<void> {
  const listening = state.server.server.listening;
  if (state.host.behaviour === 'down') {
    // Stops accepting at once; sessions already open finish on their own.
    if (listening) state.server.server.close();
    return Promise.resolve();
  }
  if (listening) return Promise.resolve();
  return new Promise<void>((resolve, reject) => {
    state.server.server.once('error', reject);
    state.server.listen(port, state.host.ip, () => {
      state.server.server.off('error', reject);
      resolve();
    });
  });
}

/** Starts `count` MX hosts on 127.0.0.2 and up, all accepting, with STARTTLS, on one shared port. */
export async function startMxHosts(count = 3): Promise<MxHosts> {
  const ips = Array.from({ length: count }, (_, i) => `127.0.0.${i + 2}`);
  const port = await portFreeOnAll(ips);
  const states: HostState[] = [];
  for (const ip of ips) {
    const state = { greylisted: new Set<string>() } as HostState;
    let behaviour: MxBehaviour = 'accept';
    let tls = true;
    state.host = {
      ip,
      get behaviour() {
        return behaviour;
      },
      setBehaviour(b) {
        behaviour = b;
        return applyListening(state, port);
      },
      get tls() {
        return tls;
      },
      set tls(on: boolean) {
        tls = on;
        // smtp-server reads this option at each EHLO.
        state.server.options.hideSTARTTLS = !on;
      },
      refuseRecipient: () => undefined,
      messages: [],
      attempts: [],
      connections: 0,
    };
    state.server = createHostServer(state);
    await applyListening(state, port);
    states.push(state);
  }

  const all = (): MxMessage[] => states.flatMap((s) => s.host.messages);
  return {
    port,
    hosts: states.map((s) => s.host),
    host(ip) {
      const found = states.find((s) => s.host.ip === ip);
      if (!found) throw new Error(`no MX host at ${ip}`);
      return found.host;
    },
    messages: all,
    async waitForMessage(match, timeoutMs = 45_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const found = all().find(match);
        if (found) return found;
        if (Date.now() > deadline)
          throw new Error(`no matching message at the MX hosts in ${timeoutMs} ms (${all().length} arrived)`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    async reset() {
      for (const s of states) {
        await s.host.setBehaviour('accept');
        s.host.tls = true;
        s.host.refuseRecipient = () => undefined;
      }
    },
    async close() {
      await Promise.all(
        states.map(
          (s) =>
            new Promise<void>((resolve) => {
              s.server.options.closeTimeout = 100;
              if (!s.server.server.listening) {
                // Already down: only end the sessions still open.
                s.server.connections.forEach((c) => c.close());
                resolve();
                return;
              }
              s.server.close(() => resolve());
            }),
        ),
      );
    },
  };
}
