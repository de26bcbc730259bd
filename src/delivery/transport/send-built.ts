import { Readable } from 'node:stream';
import type { Transporter } from 'nodemailer';
import MimeNode from 'nodemailer/lib/mime-node';
import type SMTPPool from 'nodemailer/lib/smtp-pool';

type SentMessageInfo = SMTPPool.SentMessageInfo;

/** A nodemailer transporter over an SMTP pool (what `createTransport({pool: true, ...})` makes). */
export type SmtpTransporter = Transporter<SentMessageInfo>;

/** A message built and DKIM-signed once (render-message.ts): its bytes, the envelope and the Message-ID it carries. */
export interface BuiltMessage {
  envelope: { from: string; to: string[] };
  /** The Message-ID header as written, with its angle brackets. */
  messageId: string;
  raw: Buffer;
}

/** The parts of a compiled MailMessage that nodemailer's SMTP transports read: a MailMessage has them all. */
interface CompiledMail {
  data: object;
  message: Pick<MimeNode, 'getEnvelope' | 'messageId' | 'getHeader' | 'createReadStream'>;
}

/** The transport object inside a nodemailer transporter (the SMTP pool), as its own sendMail calls it. */
interface InnerTransport {
  send(mail: CompiledMail, callback: (err: Error | null, info?: SentMessageInfo) => void): void;
}

/**
 * One MimeNode, only to normalize envelopes: each setEnvelope makes a fresh envelope object, so one answered
 * earlier is not changed by a later call. A MimeNode a send, as before, drew random bytes and set up headers
 * that nothing read (about 1 % of the delivery worker's time, docs/benchmark.md "Session 19").
 */
const envelopeNode = new MimeNode();

/** The envelope as sendMail's compiled message gives it: addresses parsed, IDN domains in punycode, each once. */
export function wireEnvelope(envelope: BuiltMessage['envelope']): { from: string; to: string[] } {
  const wire = envelopeNode.setEnvelope(envelope).getEnvelope();
  return { from: wire.from || '', to: [...wire.to] };
}

/**
 * Sends a built message through `transporter`'s SMTP transport, handing it what sendMail hands it, minus the
 * compiling: the parts of a compiled message the SMTP transports read (smtp-pool/pool-resource.js,
 * smtp-transport: the envelope, the Message-ID, a read stream, `data` for per-message options such as DSN,
 * none of which is used here). sendMail given `raw` still wraps it in a MailMessage and a MimeNode whose read
 * stream is a pipeline with an AbortController (and its DOMException when it ends) per message, which costs
 * CPU on every send (docs/benchmark.md, "Figures behind the code's choices").
 *
 * The stream is a plain Readable of the buffer, so the pool can still tell a message not a byte of which
 * was written (`readableDidRead`) and requeue it when a reused connection turns out dropped; a requeue
 * asks for a new stream. Errors and the answer are the transport's own, as sendMail passes them on.
 */
export function sendBuilt(transporter: SmtpTransporter, message: BuiltMessage): Promise<SentMessageInfo> {
  const inner: InnerTransport = transporter.transporter;
  const wire = wireEnvelope(message.envelope);
  const compiled = {
    getEnvelope: () => ({ from: wire.from, to: [...wire.to] }),
    messageId: () => message.messageId,
    getHeader: (name: string) => (name.toLowerCase() === 'message-id' ? message.messageId : undefined),
    createReadStream: () => {
      const stream = new Readable({ read() {} });
      stream.push(message.raw);
      stream.push(null);
      return stream;
    },
  };
  return new Promise((resolve, reject) => {
    inner.send({ data: {}, message: compiled }, (err, info) => {
      if (err) reject(err);
      // The pool answers every success with its info; the type leaves it optional for other transports.
      else if (info === undefined) reject(new Error('the SMTP transport answered neither an error nor a result'));
      else resolve(info);
    });
  });
}
