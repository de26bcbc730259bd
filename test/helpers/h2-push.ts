import http2 from 'node:http2';

/**
 * A bare HTTP/2 client for the gRPC listener, for what protocol clients hide: it pushes a request body as
 * fast as HTTP/2 flow control lets it and records how much of it had left when the answer came, so a
 * test can tell a server that answered before reading from one that read everything first.
 */

export interface H2Answer {
  status: number;
  headers: http2.IncomingHttpHeaders;
  /** Empty for a trailers-only answer (everything is in `headers`). */
  trailers: http2.IncomingHttpHeaders;
  body: Buffer;
  /** Body bytes the client had handed to HTTP/2 when the answer's headers arrived. */
  sentWhenAnswered: number;
  /** Whether the whole body had been sent by then. */
  finishedWhenAnswered: boolean;
  elapsedMs: number;
}

const CHUNK = 64 * 1024;
const ZEROS = Buffer.alloc(CHUNK);

/**
 * POSTs `prefix` followed by zeros up to `total` bytes. Writing stops as soon as the answer arrives; the
 * promise settles when the answer is complete.
 */
export async function pushBody(
  address: string,
  path: string,
  headers: Record<string, string>,
  body: { prefix: Uint8Array; total?: number },
  timeoutMs = 30_000,
): Promise<H2Answer> {
  const total = Math.max(body.total ?? body.prefix.length, body.prefix.length);
  const session = http2.connect(`http://${address}`);
  session.on('error', () => {}); // reported through the request below
  const started = Date.now();
  try {
    const req = session.request({ ':method': 'POST', ':path': path, ...headers });
    let sent = 0;
    let answered: { headers: http2.IncomingHttpHeaders; sent: number; finished: boolean } | undefined;
    let writeError: unknown;
    req.on('response', (h) => {
      answered = { headers: h, sent, finished: sent >= total };
    });
    const write = (chunk: Uint8Array) =>
      new Promise<void>((resolve, reject) => void req.write(chunk, (err) => (err ? reject(err) : resolve())));
    const writing = (async () => {
      await write(body.prefix);
      sent += body.prefix.length;
      while (sent < total && !answered) {
        const n = Math.min(CHUNK, total - sent);
        await write(n === CHUNK ? ZEROS : ZEROS.subarray(0, n));
        sent += n;
      }
      if (!answered) req.end();
    })().catch((err: unknown) => {
      writeError = err;
    });

    const chunks: Buffer[] = [];
    let trailers: http2.IncomingHttpHeaders = {};
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('trailers', (t) => {
      trailers = t;
    });
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`no complete answer in ${timeoutMs} ms (${sent} bytes sent)`)),
        timeoutMs,
      );
      req.on('end', () => {
        clearTimeout(timer);
        resolve();
      });
      req.on('error', (err) => {
        clearTimeout(timer);
        reject(err);
      });
      // The server resets the rest of the request stream once it has answered (RST_STREAM NO_ERROR): the
      // answer is whole if it ended; a stream closed without its end is an answer cut short.
      req.on('close', () => {
        clearTimeout(timer);
        if (req.readableEnded) resolve();
        else reject(new Error(`the stream closed (code ${req.rstCode}) before the answer ended; ${sent} bytes sent`));
      });
      req.resume();
    });
    if (!answered) throw new Error(`the stream ended without an answer${writeError ? `: ${String(writeError)}` : ''}`);
    // A write still waiting for flow control when the server reset the stream never completes: the
    // writer is left to the session's destruction below, its error (if any) being of no interest now.
    void writing;
    return {
      status: Number(answered.headers[':status']),
      headers: answered.headers,
      trailers,
      body: Buffer.concat(chunks),
      sentWhenAnswered: answered.sent,
      finishedWhenAnswered: answered.finished,
      elapsedMs: Date.now() - started,
    };
  } finally {
    session.destroy();
  }
}

/** A gRPC / gRPC-Web length-prefixed message: flags (1 = compressed), 4-byte length, then the message. */
export function envelope(message: Uint8Array, options: { declaredLength?: number; compressed?: boolean } = {}): Buffer {
  const head = Buffer.alloc(5);
  head.writeUInt8(options.compressed ? 1 : 0, 0);
  head.writeUInt32BE(options.declaredLength ?? message.length, 1);
  return Buffer.concat([head, message]);
}

export interface GrpcStatus {
  code: number;
  message: string;
  /** Every other header or trailer the status came with (`mail-error`, `grpc-accept-encoding`, ...). */
  metadata: Record<string, string>;
}

/**
 * The status of a gRPC or gRPC-Web answer, wherever it is: the trailers, the headers (trailers-only), or
 * for gRPC-Web the trailer frame at the end of the body. The message is percent-decoded.
 */
export function grpcStatus(answer: H2Answer): GrpcStatus {
  const fields: Record<string, string> = {};
  const add = (h: http2.IncomingHttpHeaders) => {
    for (const [k, v] of Object.entries(h))
      if (!k.startsWith(':') && v !== undefined) fields[k] = Array.isArray(v) ? v.join(', ') : String(v);
  };
  add(answer.headers);
  add(answer.trailers);
  let offset = 0;
  while (offset + 5 <= answer.body.length) {
    const flags = answer.body.readUInt8(offset);
    const length = answer.body.readUInt32BE(offset + 1);
    const data = answer.body.subarray(offset + 5, offset + 5 + length);
    if (flags & 0x80) {
      for (const line of data.toString('utf8').split('\r\n')) {
        const i = line.indexOf(':');
        if (i > 0) fields[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
      }
    }
    offset += 5 + length;
  }
  if (fields['grpc-status'] === undefined) throw new Error(`no grpc-status in the answer (HTTP ${answer.status})`);
  const { 'grpc-status': code, 'grpc-message': message = '', ...metadata } = fields;
  return { code: Number(code), message: decodeURIComponent(message), metadata };
}
