import type { AddressInfo } from 'node:net';
import { simpleParser, type ParsedMail } from 'mailparser';
import { SMTPServer, type SMTPServerSession } from 'smtp-server';

/** A message as the receiving server got it. */
export interface SinkMessage {
  messageId: string;
  envelopeFrom: string;
  envelopeTo: string[];
  raw: Buffer;
  parsed: ParsedMail;
}

export interface SmtpSink {
  url: string;
  port: number;
  messages: SinkMessage[];
  /** How many times each Message-ID arrived. */
  counts(): Map<string, number>;
  /** Refuse recipients: return an SMTP reply (e.g. `550 5.1.1 no such user`) to refuse, undefined to accept. */
  refuseRecipient: (address: string) => string | undefined;
  /** Called with each complete message before the server answers; may delay or refuse (throw `451 ...`). */
  beforeAccept: (raw: Buffer, session: SMTPServerSession) => Promise<void>;
  /**
   * Called when a sender's connection opens, before the greeting: whatever the sink's event loop is doing, a
   * sender can have sent nothing on the connection before this ran (senderOf tells processes apart by it).
   */
  connected: (session: SMTPServerSession) => void;
  waitFor(n: number, timeoutMs?: number): Promise<SinkMessage[]>;
  close(): Promise<void>;
}

/** A plain receiving server: anyone may send, no TLS, up to 64 MB (the bench's sink takes the same). */
export const SINK_SERVER_OPTIONS = {
  authOptional: true,
  disabledCommands: ['STARTTLS'],
  logger: false,
  size: 64 * 1024 * 1024,
};

function smtpError(reply: string): Error {
  const code = Number(reply.slice(0, 3));
  return Object.assign(new Error(reply.slice(4)), { responseCode: code });
}

/** A real SMTP server (smtp-server) on loopback that keeps what it receives, for tests and the benchmark. */
export async function startSmtpSink(options: { parse?: boolean } = {}): Promise<SmtpSink> {
  const parse = options.parse ?? true;
  const sink: SmtpSink = {
    url: '',
    port: 0,
    messages: [],
    counts() {
      const m = new Map<string, number>();
      for (const msg of sink.messages) m.set(msg.messageId, (m.get(msg.messageId) ?? 0) + 1);
      return m;
    },
    refuseRecipient: () => undefined,
    beforeAccept: async () => {},
    connected: () => {},
    async waitFor(n, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      while (sink.messages.length < n) {
        if (Date.now() > deadline)
          throw new Error(`sink received ${sink.messages.length} of ${n} messages in ${timeoutMs} ms`);
        await new Promise((r) => setTimeout(r, 20));
      }
      return sink.messages;
    },
    close: async () => {},
  };

  const server = new SMTPServer({
    ...SINK_SERVER_OPTIONS,
    onConnect(session, callback) {
      sink.connected(session);
      callback();
    },
    onRcptTo(address, _session, callback) {
      const refusal = sink.refuseRecipient(address.address);
      callback(refusal ? smtpError(refusal) : undefined);
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const raw = Buffer.concat(chunks);
        sink.beforeAccept(raw, session).then(
          async () => {
            const parsed = parse ? await simpleParser(raw) : ({} as ParsedMail);
            const messageId = parse
              ? (parsed.messageId ?? '')
              : (/^message-id:\s*(\S+)/im.exec(raw.toString('latin1'))?.[1] ?? '');
            // Counted only when the server accepts: that is when the message is the server's responsibility.
            sink.messages.push({
              messageId,
              envelopeFrom: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
              envelopeTo: session.envelope.rcptTo.map((r) => r.address),
              raw,
              parsed,
            });
            callback();
          },
          (err: Error) => callback(err),
        );
      });
    },
  });
  // A sender that goes away mid-session (a killed worker) resets its connection: not an error of the sink.
  server.on('error', () => {});
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  sink.port = (server.server.address() as AddressInfo).port;
  sink.url = `smtp://127.0.0.1:${sink.port}`;
  sink.close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return sink;
}

/** The Message-ID header of a raw message. */
export const messageIdOf = (raw: Buffer) => /^message-id:\s*(\S+)/im.exec(raw.toString('latin1'))?.[1] ?? '';

/**
 * Controls the receiving server's answer to each complete message, before its 250:
 * - `hold`: the first `passFirst` messages are accepted, every later one waits (the sender sees no reply);
 * - `refuse`: held and new messages get a 451 and are not counted;
 * - `accept`: everything is accepted.
 *
 * Why a held message must be refused, not released, once its sender is killed: smtp-server 3.21 leaves a
 * fully received message alone when the client disconnects while onData's callback is pending; a later
 * callback() writes its 250 into the closed socket (silently dropped), but the sink helper would already
 * have counted the message. Counting a message whose sender never saw the 250 would be the RFC 1047
 * duplicate manufactured by the test itself.
 */
export function controlSink(sink: SmtpSink, passFirst: number) {
  let mode: 'hold' | 'refuse' | 'accept' = 'hold';
  let arrivals = 0;
  const held: { messageId: string; refuse: (err: Error) => void }[] = [];
  const refused: string[] = [];
  const refusal = () => Object.assign(new Error('4.3.0 connection lost before the reply'), { responseCode: 451 });
  sink.beforeAccept = async (raw) => {
    const messageId = messageIdOf(raw);
    arrivals += 1;
    if (mode === 'accept' || (mode === 'hold' && arrivals <= passFirst)) return;
    if (mode === 'refuse') {
      refused.push(messageId);
      throw refusal();
    }
    await new Promise<void>((_resolve, reject) => held.push({ messageId, refuse: reject }));
  };
  return {
    held,
    refused,
    refuseAll() {
      mode = 'refuse';
      for (const h of held.splice(0)) {
        refused.push(h.messageId);
        h.refuse(refusal());
      }
    },
    acceptAll() {
      mode = 'accept';
    },
  };
}

/**
 * Which sender process each connection came from, for crash tests: the value of `generation()` when the
 * connection opened, the test raising it once it has seen a sender die and before it starts the next. A sender
 * sends on a connection only after the greeting, so every connection a killed sender used opened before, and its
 * successor's after. The time a message is counted is no guide: a final dot the killed sender wrote may be read
 * after the test has seen it exit. Answers the generation of a session's connection (-1: not seen open).
 */
export function senderOf(sink: SmtpSink, generation: () => number): (session: SMTPServerSession) => number {
  const opened = new Map<string, number>();
  sink.connected = (session) => opened.set(session.id, generation());
  return (session) => opened.get(session.id) ?? -1;
}
