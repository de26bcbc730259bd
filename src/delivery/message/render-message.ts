import { Writable } from 'node:stream';
import MailComposer from 'nodemailer/lib/mail-composer';
import type MimeNode from 'nodemailer/lib/mime-node';
import type { DKIMSignOptions } from 'nodemailer/lib/dkim/sign';
import type { ComposedMessage } from './compose.js';
import { dkimSignBuffer } from '../dkim/dkim-sign-buffer.js';
import { randomHex } from '../../random-pool.js';
import type { BuiltMessage } from '../transport/send-built.js';

/**
 * The message of `message` built and DKIM-signed once, exactly as sendMail would put it on the wire, as a raw
 * message with its envelope. Sent this way, a message is one buffer for the SMTP connection to write where
 * the signer's stream wrote each MIME part and header line to the socket on its own, a write per piece
 * (docs/benchmark.md, "Figures behind the code's choices"); direct delivery also signs once for all of a
 * message's recipient domains rather than once per domain.
 *
 * Transports send it with sendBuilt (send-built.ts), which hands the SMTP pool the buffer without compiling
 * it again.
 *
 * The message is built with nodemailer's MailComposer, as its transports do, and signed on the built buffer
 * (dkim-sign-buffer.ts) rather than through nodemailer's DKIM stream pipeline (a parser and a hashing
 * Transform, a PassThrough and their timers a message), which costs more CPU per message (docs/benchmark.md,
 * same table).
 * It covers the fields composeMessage sets; sendMail's extras (xMailer, priority, list headers, data-URL
 * images, a `keys` list of DKIM keys) are not used here.
 */
export async function renderMessage(message: ComposedMessage): Promise<BuiltMessage> {
  // Each MIME node draws its own boundary base from the OS unless given one, and only the root's is used.
  const options: ComposedMessage & { baseBoundary: string } = { ...message, baseBoundary: randomHex(8) };
  const root = new MailComposer(options).compile();
  // As the stream transport did: a Bcc header given is written (composeMessage never gives one).
  root.keepBcc = true;
  const built = await build(root);
  const dkim = message.dkim as DKIMSignOptions | undefined;
  return {
    // The envelope as given: outcomes name recipients by these addresses (sendBuilt normalizes them for the wire).
    envelope: message.envelope,
    // The Message-ID header as written (nodemailer adds the angle brackets): what transports answer.
    messageId: root.messageId(),
    raw: dkim ? await dkimSignBuffer(built, dkim) : built,
  };
}

/**
 * The message's bytes, streamed by the tree into one collecting sink: what MimeNode's build() returns, without
 * the PassThrough and `pipeline` (and the AbortController it makes) that createReadStream wraps it in.
 */
function build(root: MimeNode): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        chunks.push(chunk);
        done();
      },
    });
    root.stream(sink, {}, (err) => {
      if (err) return reject(err);
      const message = Buffer.concat(chunks);
      // createReadStream's LastNewline: the message ends with a line break.
      const last = message.at(-1);
      resolve(last === 0x0a ? message : Buffer.concat([message, Buffer.from(last === 0x0d ? '\n' : '\r\n')]));
    });
  });
}
