import { fastifyConnectPlugin } from '@connectrpc/connect-fastify';
import { createContextValues, type ServiceImpl } from '@connectrpc/connect';
import fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { CLIENT_ADDRESS } from '../api/call-context.js';
import { BODY_LIMITS } from '../domain/limits.js';
import { AdminService } from '../gen/mail/v1/admin_service_pb.js';
import { EmailService } from '../gen/mail/v1/email_service_pb.js';
import type { Logger } from '../logger.js';
import { createErrorInterceptor } from './error-interceptor.js';

/**
 * gRPC, gRPC-Web and Connect on one HTTP/2 cleartext listener, over the same handlers as the REST gateway.
 * Connect's HandlerContext carries the request and response headers the handlers read and set.
 */
export async function buildGrpcApp(deps: {
  emailApi: Partial<ServiceImpl<typeof EmailService>>;
  adminApi: Partial<ServiceImpl<typeof AdminService>>;
  logger: Logger;
}): Promise<FastifyInstance> {
  const app = fastify({
    http2: true,
    loggerInstance: deps.logger as FastifyBaseLogger,
    logController: new LogController({ disableRequestLogging: true }),
    // gRPC clients keep their HTTP/2 connection open while idle; without this, close() (Ctrl-C, SIGTERM)
    // waits for every such session to time out (Fastify's http2SessionTimeout, 72 s). Sessions are closed
    // gracefully: calls in flight finish first.
    forceCloseConnections: true,
  });
  app.addHook('onRequest', async (request, reply) => {
    if (request.headers['content-type']?.startsWith('application/grpc')) reencodeGrpcMessageTrailer(reply.raw);
  });
  await app.register(fastifyConnectPlugin, {
    routes: (router) => {
      router.service(EmailService, deps.emailApi);
      router.service(AdminService, deps.adminApi);
    },
    interceptors: [createErrorInterceptor(deps.logger)],
    // The handlers read who is calling (the admin-token throttle counts per address) from the context.
    contextValues: (request) => createContextValues().set(CLIENT_ADDRESS, request.ip),
    readMaxBytes: BODY_LIMITS.batch,
    shutdownTimeoutMs: 5000,
  });
  return app as unknown as FastifyInstance;
}

/**
 * connect-es writes `grpc-message` with encodeURIComponent, while @grpc/grpc-js reads it with decodeURI, which
 * leaves `%3A`, `%2F`, `%2C` ... undecoded: a grpc-js caller would see `subject%3A length 999 ...`. The gRPC
 * spec (PROTOCOL-HTTP2.md, Status-Message) percent-encodes only bytes outside 0x20-0x7E and `%`; written that
 * way, every decoder (full percent-decoding, decodeURI, decodeURIComponent) reads the same text.
 */
function reencodeGrpcMessageTrailer(res: { addTrailers(headers: Record<string, unknown>): void }): void {
  const addTrailers = res.addTrailers.bind(res);
  res.addTrailers = (headers) => {
    const message = headers['grpc-message'];
    if (typeof message === 'string') {
      let text: string;
      try {
        text = decodeURIComponent(message);
      } catch {
        text = message;
      }
      headers = { ...headers, 'grpc-message': grpcPercentEncode(text) };
    }
    addTrailers(headers);
  };
}

function grpcPercentEncode(text: string): string {
  let out = '';
  for (const byte of Buffer.from(text, 'utf8')) {
    out += byte >= 0x20 && byte <= 0x7e && byte !== 0x25 ? String.fromCharCode(byte) : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}
