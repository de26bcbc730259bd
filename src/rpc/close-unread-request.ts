import { constants, type Http2ServerRequest, type Http2ServerResponse } from 'node:http2';

/**
 * How long a streamed answer's trailers are given to reach the client before the rest of its request is reset:
 * a gRPC client that reads the trailers' END_STREAM closes its side itself, well within this.
 */
export const TRAILERS_GRACE_MS = 2000;

/**
 * Once a call is answered, nothing more of its request is wanted. When the answer came before the whole
 * request did (refused credentials, a message over its limit, an unknown encoding, a bidi stream ended by the
 * server), the client may still be sending, or be blocked on flow control waiting for us to read: the stream
 * would stay open, and with it the HTTP/2 session, which then holds up a graceful close for good. RST_STREAM
 * NO_ERROR after a complete response is how HTTP/2 asks a client to stop sending (RFC 9113, 8.1); Node does the
 * same on its own only for a request nobody began to read and whose answer has no trailers. Node sends any data
 * still queued on the stream before the reset, but not trailers (nghttp2 sends a reset ahead of a HEADERS frame
 * queued before it): so an answer that ends in trailers (one that sent messages, then its status) is not reset at
 * once, or the client would see the call end with no status. What arrives is dropped from then on, and the stream
 * is reset only if the client has not closed it after TRAILERS_GRACE_MS.
 */
export function closeUnreadRequest(req: Http2ServerRequest, res: Http2ServerResponse): void {
  // The stream's own 'finish' (the answer is written): the response's 'finish' waits for the stream to close.
  const stream = res.stream;
  stream.once('finish', () => {
    setImmediate(() => {
      if (stream.closed || stream.destroyed || req.readableEnded) return;
      // Node frees a closed stream only once what arrived has been read. The request object that fed on it
      // was abandoned unread (and pauses the stream whenever it cannot take more), so the rest is dropped
      // here. Destroying the stream instead could drop the end of an answer still queued behind the reset.
      const reset = () => {
        if (stream.closed || stream.destroyed) return;
        stream.close(constants.NGHTTP2_NO_ERROR);
        stream.removeAllListeners('data');
        stream.resume();
      };
      // Node's compatibility layer hands the trailers over on 'wantTrailers', after the last DATA is queued.
      if (stream.sentTrailers === undefined) return reset();
      stream.removeAllListeners('data');
      stream.resume();
      const timer = setTimeout(reset, TRAILERS_GRACE_MS);
      timer.unref();
      stream.once('close', () => clearTimeout(timer));
    });
  });
}
