import { createRouterTransport, type ConnectRouter } from '@connectrpc/connect';
import type { FastifyInstance } from 'fastify';
import { onTestFinished } from 'vitest';
import { BytesInFlight } from '../../src/bytes-in-flight.js';
import { AppError } from '../../src/errors.js';
import { AdminService } from '../../src/gen/mail/v1/admin_service_pb.js';
import { EmailService } from '../../src/gen/mail/v1/email_service_pb.js';
import { buildRestApp, type RestAppDeps } from '../../src/http/rest-app.js';
import { createLogger } from '../../src/logger.js';
import { createMetrics } from '../../src/metrics.js';
import { createErrorInterceptor } from '../../src/rpc/error-interceptor.js';
import { createFakeEmailApi } from './fake-api-deps.js';

const logger = createLogger('silent', 'test');

/**
 * An admin API none of these tests reach: every RPC answers 401, as to a caller without the token, and so does the
 * streamed CSV export (csv-routes.ts), which is no RPC of its own on REST.
 */
const refuseAdmin = async (): Promise<never> => {
  throw new AppError('unauthorized', 'Invalid or missing admin token');
};
const adminApi = {
  ...Object.fromEntries(AdminService.methods.map((m) => [m.localName, refuseAdmin])),
  streamAccountSuppressionsCsv: refuseAdmin,
};

/**
 * The REST app as the service builds it, over the fake email API, answered in memory (`app.inject`);
 * it is closed when the test finishes. `deps` replaces any of the app's dependencies.
 */
export async function buildTestRestApp(
  deps: Partial<RestAppDeps> = {},
): Promise<{ app: FastifyInstance } & ReturnType<typeof createFakeEmailApi>> {
  const fake = createFakeEmailApi();
  const app = await buildRestApp({
    emailApi: fake.emailApi,
    adminApi,
    admitApi: fake.guard.admit,
    admitAdmin: refuseAdmin,
    logger,
    metrics: createMetrics(),
    publicUrl: 'http://mailer.test',
    admitMetrics: () => {},
    checkReady: async () => [],
    bytesInFlight: new BytesInFlight({ process: 256 * 1024 * 1024, perKey: 64 * 1024 * 1024 }),
    ...deps,
  });
  onTestFinished(() => app.close());
  return { app, ...fake };
}

/**
 * The same email API over Connect, in memory (`createRouterTransport`), with the error interceptor the
 * gRPC app uses: what a Connect client would see, without a socket.
 */
export function createTestConnectTransport(): { transport: ReturnType<typeof createRouterTransport> } & ReturnType<
  typeof createFakeEmailApi
> {
  const fake = createFakeEmailApi();
  const transport = createRouterTransport(
    (router: ConnectRouter) => router.service(EmailService, fake.emailApi as never),
    { router: { interceptors: [createErrorInterceptor(logger)] } },
  );
  return { transport, ...fake };
}
