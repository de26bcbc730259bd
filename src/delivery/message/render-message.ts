import { Writable } from 'node:stream';
import { Encoder as Base64Encoder } from 'nodemailer/lib/base64';
import MailComposer from 'nodemailer/lib/mail-composer';
import { Encoder as QpEncoder } from 'nodemailer/lib/qp';
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
 * The message is composed with nodemailer's MailComposer, as its transports do, written out in one pass
 * (buildAtOnce) where its tree allows, else by the tree's own stream, and signed on the built buffer
 * (dkim-sign-buffer.ts) rather than through nodemailer's DKIM stream pipeline (a parser and a hashing
 * Transform, a PassThrough and their timers a message), which costs more CPU per message (docs/benchmark.md,
 * same table). It covers the fields composeMessage sets; sendMail's extras (xMailer, priority, list headers,
 * data-URL images, a `keys` list of DKIM keys) are not used here.
 */
export async function renderMessage(message: ComposedMessage): Promise<BuiltMessage> {
  // Each MIME node draws its own boundary base from the OS unless given one, and only the root's is used.
  const options: ComposedMessage & { baseBoundary: string } = { ...message, baseBoundary: randomHex(8) };
  const root = new MailComposer(options).compile();
  // As the stream transport did: a Bcc header given is written (composeMessage never gives one).
  root.keepBcc = true;
  const built = endingInNewline(buildAtOnce(root) ?? (await build(root)));
  const dkim = message.dkim as DKIMSignOptions | undefined;
  return {
    // The envelope as given: outcomes name recipients by these addresses (sendBuilt normalizes them for the wire).
    envelope: message.envelope,
    // The Message-ID header as written (nodemailer adds the angle brackets): what transports answer.
    messageId: root.messageId(),
    raw: dkim ? await dkimSignBuffer(built, dkim) : built,
  };
}

/** What of a MimeNode buildAtOnce reads beyond its typed surface. */
interface NodeInternals {
  _raw?: unknown;
  _transforms?: unknown[];
  _processFuncs?: unknown[];
  newline?: unknown;
}

/**
 * The message's bytes, built in one synchronous pass, or undefined for a tree it leaves to MimeNode's stream
 * (a node with raw content, content from a stream, file or URL, or a transform). MimeNode.stream writes each
 * node's headers, its content through a Transform encoder joined by `pipeline`, and its children, one
 * event-loop turn per step (setImmediate), with streams, listeners and an AbortController per part: for the
 * string and buffer parts composeMessage gives, more of the delivery worker's time than the bytes
 * (docs/benchmark.md, "Session 26"). This writes the same bytes: the same headers (buildHeaders), the same
 * delimiters, and the content through the same encoders, fed the whole part at once as the stream would.
 * test/unit/render-message.test.ts holds it byte for byte to the streamed build.
 */
export function buildAtOnce(root: MimeNode): Buffer | undefined {
  if (!writableAtOnce(root)) return undefined;
  const out: (Buffer | string)[] = [];
  const write = (node: MimeNode): void => {
    const content = node.content as string | Buffer | undefined;
    const transferEncoding = node.getTransferEncoding();
    out.push(`${node.buildHeaders()}\r\n\r\n`);
    if (content) {
      const bytes = typeof content === 'string' ? Buffer.from(content) : content;
      if (transferEncoding === 'base64') encodeInto(out, new Base64Encoder(), bytes);
      // As MimeNode.stream: outside of text, a lone CR or LF is data.
      else if (transferEncoding === 'quoted-printable')
        encodeInto(out, new QpEncoder({ binary: !/^text\//i.test(node.contentType ?? '') } as object), bytes);
      else out.push(bytes);
    }
    if (!node.multipart) return;
    for (const [i, child] of node.childNodes.entries()) {
      out.push(`${i > 0 ? '\r\n' : ''}--${String(node.boundary)}\r\n`);
      write(child);
    }
    out.push(`\r\n--${String(node.boundary)}--\r\n`);
  };
  write(root);
  return Buffer.concat(out.map((c) => (typeof c === 'string' ? Buffer.from(c) : c)));
}

/**
 * Whether every node of the tree is one buildAtOnce writes as the stream would: checked before anything is
 * written, so a tree left to the stream has its headers built once, by the stream.
 */
function writableAtOnce(root: MimeNode): boolean {
  if ((root as MimeNode & NodeInternals).newline) return false;
  const plain = (node: MimeNode & NodeInternals): boolean =>
    !node._raw &&
    !node._transforms?.length &&
    !node._processFuncs?.length &&
    (!node.content || typeof node.content === 'string' || Buffer.isBuffer(node.content)) &&
    node.childNodes.every(plain);
  return plain(root);
}

/** Hooks of a nodemailer encoder (a Transform whose steps are synchronous) driven directly with the whole input. */
interface SyncTransform {
  push(chunk: unknown, encoding?: BufferEncoding): boolean;
  _transform(chunk: Buffer, encoding: string, done: () => void): void;
  _flush(done: () => void): void;
}

/** `bytes` through `encoder` as one chunk, its output appended to `out`, as the encoder's stream would give it. */
function encodeInto(out: (Buffer | string)[], encoder: object, bytes: Buffer): void {
  const hooks = encoder as SyncTransform;
  hooks.push = (chunk) => {
    if (chunk !== null) out.push(chunk as Buffer | string);
    return true;
  };
  const done = (err?: unknown) => {
    if (err) throw err;
  };
  hooks._transform(bytes, 'buffer', done);
  hooks._flush(done);
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
    root.stream(sink, {}, (err) => (err ? reject(err) : resolve(Buffer.concat(chunks))));
  });
}

/** createReadStream's LastNewline: the message ends with a line break. */
export function endingInNewline(message: Buffer): Buffer {
  const last = message.at(-1);
  return last === 0x0a ? message : Buffer.concat([message, Buffer.from(last === 0x0d ? '\n' : '\r\n')]);
}
