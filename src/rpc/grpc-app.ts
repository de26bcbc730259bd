import type { Http2Server } from 'node:http2';
import type { DescMethod, DescService } from '@bufbuild/protobuf';
import {
  createContextValues,
  createServiceImplSpec,
  type ConnectRouter,
  type HandlerContext,
  type ServiceImpl,
} from '@connectrpc/connect';
import { fastifyConnectPlugin } from '@connectrpc/connect-fastify';
import fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { CLIENT_ADDRESS } from '../api/call-context.js';
import type { BytesInFlight } from '../bytes-in-flight.js';
import { BODY_LIMITS } from '../domain/limits.js';
import { AppError } from '../errors.js';
import { AdminService } from '../gen/mail/v1/admin_service_pb.js';
import { EmailService } from '../gen/mail/v1/email_service_pb.js';
import { ServerReflection } from '../gen/grpc/reflection/v1/reflection_pb.js';
import { ServerReflection as ServerReflectionV1alpha } from '../gen/grpc/reflection/v1alpha/reflection_pb.js';
import type { Logger } from '../logger.js';
import type { Metrics } from '../metrics.js';
import { REQUEST_ID_HEADER, requestIdFrom } from '../telemetry/request-id.js';
import { admittedCall, createAdmissionGate, type Admit } from './admission-gate.js';
import { closeUnreadRequest } from './close-unread-request.js';
import { createErrorInterceptor } from './error-interceptor.js';
import { admitCallBody, meterCallBody, withBodyMeter } from './message-bytes.js';
import { createRequestContextInterceptor, REQUEST_ID } from './request-context.js';
import { shapeGrpcAnswer } from './grpc-trailers.js';
import { explainReadLimit, readMaxBytesFor } from './read-limits.js';
import { createReflection, REFLECTION_READ_MAX_BYTES } from './reflection.js';
import { createRpcMetrics, type RpcMetrics } from './rpc-metrics.js';

/**
 * gRPC, gRPC-Web and Connect on one HTTP/2 cleartext listener, over the same handlers as the REST gateway.
 * Connect's HandlerContext carries the request and response headers the handlers read and set.
 * Credentials are judged before the message is read, and each RPC reads at most its own limit.
 */
export async function buildGrpcApp(deps: {
  emailApi: Partial<ServiceImpl<typeof EmailService>>;
  adminApi: Partial<ServiceImpl<typeof AdminService>>;
  /** Admits a call to mail.v1.EmailService (key, rate limit) before its message is read. */
  admitApi: Admit;
  /** Admits a call to mail.v1.AdminService (admin token) before its message is read. */
  admitAdmin: Admit;
  logger: Logger;
  metrics: Pick<Metrics, 'rpcRequests' | 'rpcDuration'>;
  /** Request bodies held at once, per process and per key (shared with REST and SMTP submission). */
  bytesInFlight: BytesInFlight;
}): Promise<FastifyInstance<Http2Server>> {
  const app = fastify({
    http2: true,
    loggerInstance: deps.logger as FastifyBaseLogger,
    logController: new LogController({ disableRequestLogging: true }),
    // gRPC clients keep their HTTP/2 connection open while idle; without this, close() (Ctrl-C, SIGTERM)
    // waits for every such session to time out (Fastify's http2SessionTimeout, 72 s). Sessions are closed
    // gracefully: calls in flight finish first.
    forceCloseConnections: true,
    // The caller's X-Request-Id when acceptable, else a new one; answered in the response metadata.
    requestIdHeader: false,
    genReqId: (req) => requestIdFrom(req.headers[REQUEST_ID_HEADER]),
  });
  // A path that is no RPC of ours (gRPC clients read the 404 as UNIMPLEMENTED) answers in the spec's shape too.
  app.setNotFoundHandler((request, reply) => {
    const err = new AppError('not_found', `procedure ${request.url.split('?')[0] ?? ''} not found`);
    void reply.code(err.status).send(err.body());
  });
  app.addHook('onRequest', async (request, reply) => {
    closeUnreadRequest(request.raw, reply.raw);
    meterCallBody(deps.bytesInFlight, request.raw, reply.raw, deps.logger);
    reply.raw.setHeader(REQUEST_ID_HEADER, request.id);
    // gRPC only: gRPC-Web carries its trailers in the body, and Connect its errors as JSON.
    if (isGrpc(request.headers['content-type'])) shapeGrpcAnswer(reply.raw);
  });
  const rpcMetrics = createRpcMetrics(deps.metrics);
  app.addHook('onResponse', async (request, reply) => rpcMetrics.answered(request, reply));
  await app.register(fastifyConnectPlugin, {
    routes: (router) => {
      addService(
        router,
        EmailService,
        deps.emailApi,
        createAdmissionGate(deps.admitApi, deps.logger),
        rpcMetrics,
        deps.logger,
      );
      addService(
        router,
        AdminService,
        deps.adminApi,
        createAdmissionGate(deps.admitAdmin, deps.logger),
        rpcMetrics,
        deps.logger,
      );
      // Server reflection (grpcurl with no proto files): the public schema only, so no credentials, and small
      // requests (reflection.ts says why and what bounds a stream).
      const reflection = createReflection([EmailService, AdminService]);
      const anyone = async () => {};
      const small = () => REFLECTION_READ_MAX_BYTES;
      addService(router, ServerReflection, reflection.v1, anyone, rpcMetrics, deps.logger, small);
      addService(router, ServerReflectionV1alpha, reflection.v1alpha, anyone, rpcMetrics, deps.logger, small);
    },
    // Outermost first: the request context sees errors as the caller gets them, and the metrics' interceptor
    // the code the error interceptor made.
    interceptors: [createRequestContextInterceptor(), rpcMetrics.interceptor, createErrorInterceptor(deps.logger)],
    // The handlers read who is calling (the admin-token throttle counts per address) from the context.
    contextValues: (request) =>
      rpcMetrics.track(
        request,
        withBodyMeter(createContextValues().set(CLIENT_ADDRESS, request.ip).set(REQUEST_ID, request.id), request.raw),
      ),
    // Each RPC sets its own (read-limits.ts); this is the bound for anything registered without one.
    readMaxBytes: BODY_LIMITS.other,
    shutdownTimeoutMs: 5000,
  });
  return app;
}

/**
 * One route per RPC rather than one per service, as connect-es takes the read limit and the request gate
 * per RPC. connect-es's own spec of the service pairs each RPC with its handler (bound to `impl`), or with
 * one that answers UNIMPLEMENTED, as its service routes do; the handler gets the call as the gate admitted it.
 */
function addService<S extends DescService>(
  router: ConnectRouter,
  service: S,
  impl: Partial<ServiceImpl<S>>,
  admission: (ctx: HandlerContext) => Promise<void>,
  metrics: RpcMetrics,
  logger: Logger,
  maxBytesFor: (method: DescMethod) => number = readMaxBytesFor,
): void {
  const gate = metrics.gate(admission);
  for (const spec of Object.values(createServiceImplSpec(service, impl).methods)) {
    const readMaxBytes = maxBytesFor(spec.method);
    const options = {
      readMaxBytes,
      requestGate: async (ctx: HandlerContext) => {
        explainReadLimit(ctx, readMaxBytes);
        await gate(ctx);
        // Admitted: the key its bytes in flight count for, known before connect-es reads any of them.
        admitCallBody(ctx, readMaxBytes, logger);
      },
    };
    // One branch per kind, so that each RPC's handler keeps its kind's signature.
    switch (spec.kind) {
      case 'unary':
        router.rpc(spec.method, (req, ctx) => spec.impl(req, admittedCall(ctx)), options);
        break;
      case 'server_streaming':
        router.rpc(spec.method, (req, ctx) => spec.impl(req, admittedCall(ctx)), options);
        break;
      case 'client_streaming':
        router.rpc(spec.method, (reqs, ctx) => spec.impl(reqs, admittedCall(ctx)), options);
        break;
      case 'bidi_streaming':
        router.rpc(spec.method, (reqs, ctx) => spec.impl(reqs, admittedCall(ctx)), options);
        break;
    }
  }
}

const isGrpc = (contentType: string | undefined) =>
  contentType === 'application/grpc' || contentType?.startsWith('application/grpc+') === true;
