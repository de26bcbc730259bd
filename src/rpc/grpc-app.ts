import { fastifyConnectPlugin } from '@connectrpc/connect-fastify';
import type { ServiceImpl } from '@connectrpc/connect';
import fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
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
  const app = fastify({ http2: true, loggerInstance: deps.logger as FastifyBaseLogger, logController: new LogController({ disableRequestLogging: true }) });
  await app.register(fastifyConnectPlugin, {
    routes: (router) => {
      router.service(EmailService, deps.emailApi);
      router.service(AdminService, deps.adminApi);
    },
    interceptors: [createErrorInterceptor(deps.logger)],
    readMaxBytes: BODY_LIMITS.batch,
    shutdownTimeoutMs: 5000,
  });
  return app as unknown as FastifyInstance;
}
