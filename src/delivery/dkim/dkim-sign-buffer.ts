import { createHash, sign as rsaSign, type KeyLike } from 'node:crypto';
import { promisify } from 'node:util';
import MessageParser from 'nodemailer/lib/dkim/message-parser';
import sign, { type DKIMSignOptions } from 'nodemailer/lib/dkim/sign';
import { foldLines } from 'nodemailer/lib/mime-funcs';
import { normalizeDomain } from 'nodemailer/lib/shared';

/** RSA signing with a callback: OpenSSL runs in libuv's thread pool, not on the event loop. */
const signInThreadPool = promisify(rsaSign);

/**
 * nodemailer's default list of signed header fields (RFC 4871 5.5), for options without one, and
 * List-Unsubscribe-Post: RFC 8058 one-click only counts when the signature covers it as well as
 * List-Unsubscribe (compose.ts's own list, which the send path passes, has both).
 */
const DEFAULT_FIELDS =
  'From:Sender:Reply-To:Subject:Date:Message-ID:To:Cc:MIME-Version:Content-Type:Content-Transfer-Encoding:' +
  'Content-ID:Content-Description:Resent-Date:Resent-From:Resent-Sender:Resent-To:Resent-Cc:Resent-Message-ID:In-Reply-To:' +
  'References:List-Id:List-Help:List-Unsubscribe:List-Unsubscribe-Post:List-Subscribe:List-Post:List-Owner:List-Archive:OTP-Token';

/**
 * The relaxed body canonicalization (RFC 6376 3.4.4) of a whole message body, as nodemailer's streaming
 * RelaxedBody computes it: a line ends at LF (a CR right before it belongs to the break, any other CR is
 * content), runs of SP/HTAB become one SP and are dropped at the end of a line, empty lines at the end of the
 * body are ignored and a non-empty body ends with CRLF. Done with two regular expressions over the whole body
 * instead of a byte loop in a Transform stream.
 */
export function relaxedBody(body: Buffer): Buffer {
  let text = body
    .toString('latin1')
    .replace(/[ \t]+/g, ' ')
    .replace(/ ?\r?\n/g, '\r\n');
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

/** Relaxed canonicalization of one header field's value (RFC 6376 3.4.2), as nodemailer's signer does it. */
function relaxedHeaderLine(line: string): string {
  return line
    .slice(line.indexOf(':') + 1)
    .replace(/\r?\n/g, '')
    .replace(/[ \t]+/g, ' ')
    .replace(/^ | $/g, '');
}

/** The DKIM-Signature field up to its empty `b=` tag, folded, as nodemailer writes it. */
function dkimField(options: DKIMSignOptions, fieldNames: string, bodyHash: string): string {
  // Tag values are interpolated into the tag list: nothing that could end a value or start a tag.
  // eslint-disable-next-line no-control-regex -- control characters are what it removes
  const clean = (value: string | undefined) => (value ?? '').replace(/[\x00-\x1f\x7f;=]/g, '');
  const tags = [
    'v=1',
    'a=rsa-sha256',
    'c=relaxed/relaxed',
    `d=${normalizeDomain(clean(options.domainName), false)}`,
    'q=dns/txt',
    `s=${clean(options.keySelector)}`,
    `bh=${bodyHash}`,
    `h=${clean(fieldNames)}`,
  ].join('; ');
  return `${foldLines(`DKIM-Signature: ${tags}`, 76)};\r\n b=`;
}

/**
 * The message with a DKIM-Signature header (relaxed/relaxed, rsa-sha256) put in front: what nodemailer's DKIM
 * stream writes, byte for byte, computed on the built buffer in one pass. The header canonicalization is
 * nodemailer's own; the RSA signature, a large share of the delivery worker's event loop when it ran there
 * (docs/benchmark.md, "Figures behind the code's choices"), is made in libuv's thread pool, so the loop goes
 * on with other sends and a second core can sign. As in nodemailer, a key the signer cannot use leaves the
 * message unsigned.
 */
export async function dkimSignBuffer(message: Buffer, options: DKIMSignOptions): Promise<Buffer> {
  const split = headerEnd(message);
  const parser = new MessageParser();
  parser.rawHeaders = message.subarray(0, split);
  const bodyHash = createHash('sha256')
    .update(relaxedBody(message.subarray(split)))
    .digest('base64');
  const canonical = sign.relaxedHeaders(
    parser.parseHeaders(),
    options.headerFieldNames ?? DEFAULT_FIELDS,
    options.skipFields,
  );
  const field = dkimField(options, canonical.fieldNames, bodyHash);
  const signed = `${canonical.headers}dkim-signature:${relaxedHeaderLine(field)}`;
  let signature: Buffer;
  try {
    signature = await signInThreadPool('sha256', Buffer.from(signed, 'latin1'), options.privateKey as KeyLike);
  } catch {
    return message;
  }
  const b = signature
    .toString('base64')
    .replace(/(^.{73}|.{75}(?!\r?\n|\r))/g, '$&\r\n ')
    .trim();
  return Buffer.concat([Buffer.from(`${field}${b}\r\n`, 'latin1'), message]);
}
