import { createHash } from 'node:crypto';
import MessageParser from 'nodemailer/lib/dkim/message-parser';
import sign, { type DKIMSignOptions } from 'nodemailer/lib/dkim/sign';

/**
 * The relaxed body canonicalization (RFC 6376 3.4.4) of a whole message body, as nodemailer's streaming
 * RelaxedBody computes it: a line ends at LF (a CR right before it belongs to the break, any other CR is
 * content), runs of SP/HTAB become one SP and are dropped at the end of a line, empty lines at the end of the
 * body are ignored and a non-empty body ends with CRLF. Done with two regular expressions over the whole body
 * instead of a byte loop in a Transform stream.
 */
export function relaxedBody(body: Buffer): Buffer {
  let text = body.toString('latin1').replace(/[ \t]+/g, ' ').replace(/ ?\r?\n/g, '\r\n');
  if (!text.endsWith('\r\n')) {
    // The last line has no line break: drop its trailing space, and break it if anything is left of it.
    if (text.endsWith(' ')) text = text.slice(0, -1);
    if (text.length > 0 && !text.endsWith('\r\n')) text += '\r\n';
  }
  // Empty lines at the end count for nothing (a body of empty lines only is the empty body).
  let end = text.length;
  while (end >= 4 && text.charCodeAt(end - 3) === 0x0a && text.charCodeAt(end - 4) === 0x0d) end -= 2;
  if (end === 2) end = 0;
  return Buffer.from(end === text.length ? text : text.slice(0, end), 'latin1');
}

/** Where the header block ends (after the empty line), as nodemailer's MessageParser finds it. */
function headerEnd(message: Buffer): number {
  const crlf = message.indexOf('\r\n\r\n');
  const lf = message.indexOf('\n\n');
  if (crlf === -1 && lf === -1) return message.length;
  if (crlf === -1) return lf + 2;
  if (lf === -1) return crlf + 4;
  return Math.min(crlf + 4, lf + 2);
}

/**
 * The message with a DKIM-Signature header (relaxed/relaxed, rsa-sha256) put in front: what nodemailer's DKIM
 * stream writes, computed on the built buffer in one pass. The header canonicalization and the signature are
 * nodemailer's own `sign`, fed the header lines its MessageParser would parse. As in nodemailer, a key the
 * signer cannot use leaves the message unsigned.
 */
export function dkimSignBuffer(message: Buffer, options: DKIMSignOptions): Buffer {
  const split = headerEnd(message);
  const parser = new MessageParser();
  parser.rawHeaders = message.subarray(0, split);
  const bodyHash = createHash('sha256').update(relaxedBody(message.subarray(split))).digest('base64');
  const field = sign(parser.parseHeaders(), 'sha256', bodyHash, options);
  if (field === false) return message;
  return Buffer.concat([Buffer.from(field + '\r\n', 'latin1'), message]);
}
