import type { Http2ServerResponse, OutgoingHttpHeaders } from 'node:http2';

/**
 * How gRPC answers go on the wire, where connect-es's Node adapter leaves it to us:
 *
 * - An answer without a message (every error of a unary call) is sent Trailers-Only: one HEADERS frame
 *   with the status and END_STREAM (https://github.com/grpc/grpc/blob/master/doc/PROTOCOL-HTTP2.md), rather
 *   than headers and then trailers. The adapter writes the head first, so it is held back until a message or
 *   the end shows which it is.
 * - `grpc-message` is re-encoded: connect-es writes it with encodeURIComponent, while @grpc/grpc-js reads
 *   it with decodeURI, which leaves `%3A`, `%2F`, `%2C` ... undecoded (a grpc-js caller would see
 *   `subject%3A length 999 ...`). The gRPC spec percent-encodes only bytes outside 0x20-0x7E and `%`;
 *   written that way, every decoder (full percent-decoding, decodeURI, decodeURIComponent) reads the same.
 */
export function shapeGrpcAnswer(res: Http2ServerResponse): void {
  const { writeHead, write, end, addTrailers } = res;
  const sendHeadNow = writeHead as (
    this: Http2ServerResponse,
    status: number,
    headers: OutgoingHttpHeaders,
  ) => Http2ServerResponse;
  let held: { status: number; headers: OutgoingHttpHeaders } | undefined;
  let heldTrailers: OutgoingHttpHeaders | undefined;
  const sendHead = () => {
    if (held && !res.headersSent) sendHeadNow.call(res, held.status, held.headers);
    held = undefined;
  };

  res.writeHead = ((status: number, headers?: OutgoingHttpHeaders) => {
    held = { status, headers: { ...held?.headers, ...headers } };
    return res;
  }) as typeof res.writeHead;
  res.write = ((...args: Parameters<typeof write>) => {
    sendHead();
    return write.apply(res, args);
  }) as typeof res.write;
  res.addTrailers = (trailers) => {
    const encoded = reencodeGrpcMessage(trailers);
    if (res.headersSent) addTrailers.call(res, encoded);
    else heldTrailers = { ...heldTrailers, ...encoded };
  };
  res.end = ((...args: Parameters<typeof end>) => {
    if (!res.headersSent && heldTrailers) {
      // Trailers-Only: the trailers join the head, which end() sends as one frame with END_STREAM.
      const status = held?.status ?? res.statusCode;
      for (const [name, value] of Object.entries({ ...held?.headers, ...heldTrailers }))
        if (value !== undefined) res.setHeader(name, value);
      res.statusCode = status;
      held = undefined;
      heldTrailers = undefined;
    } else {
      sendHead();
    }
    // end() sends a head not yet sent through this.writeHead, which must now send it.
    res.writeHead = writeHead;
    return end.apply(res, args);
  }) as typeof res.end;
}

function reencodeGrpcMessage(headers: OutgoingHttpHeaders): OutgoingHttpHeaders {
  const message = headers['grpc-message'];
  if (typeof message !== 'string') return headers;
  let text: string;
  try {
    text = decodeURIComponent(message);
  } catch {
    text = message;
  }
  return { ...headers, 'grpc-message': grpcPercentEncode(text) };
}

function grpcPercentEncode(text: string): string {
  let out = '';
  for (const byte of Buffer.from(text, 'utf8')) {
    out +=
      byte >= 0x20 && byte <= 0x7e && byte !== 0x25
        ? String.fromCharCode(byte)
        : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}
