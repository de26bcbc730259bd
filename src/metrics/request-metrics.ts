import { Counter, Histogram, type Registry } from 'prom-client';

const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** Requests answered by the API role: REST per route, and gRPC, gRPC-Web and Connect per RPC. */
export function requestMetrics(registry: Registry) {
  const registers = [registry];
  return {
    httpRequests: new Counter({
      name: 'mailer_http_requests_total',
      help: 'REST requests answered, by method, route (the route pattern; unmatched for none) and status.',
      labelNames: ['method', 'route', 'status'] as const,
      registers,
    }),
    httpDuration: new Histogram({
      name: 'mailer_http_request_duration_seconds',
      help: 'REST request latency, by method and route.',
      labelNames: ['method', 'route'] as const,
      registers,
      buckets: LATENCY_BUCKETS,
    }),
    rpcRequests: new Counter({
      name: 'mailer_rpc_requests_total',
      help: 'RPCs answered on the gRPC port, by service, method, code (gRPC status name: OK, InvalidArgument, Unauthenticated ...) and protocol (grpc, grpc_web, connect).',
      labelNames: ['service', 'method', 'code', 'protocol'] as const,
      registers,
    }),
    rpcDuration: new Histogram({
      name: 'mailer_rpc_request_duration_seconds',
      help: "RPC latency, by service and method, from the request's arrival to its answer.",
      labelNames: ['service', 'method'] as const,
      registers,
      buckets: LATENCY_BUCKETS,
    }),
  };
}
