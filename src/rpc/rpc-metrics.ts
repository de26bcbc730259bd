import {
  Code,
  ConnectError,
  createContextKey,
  type ContextValues,
  type HandlerContext,
  type Interceptor,
} from '@connectrpc/connect';
import { codeFromHttpStatus } from '@connectrpc/connect/protocol-connect';
import type { Metrics } from '../metrics.js';

/** How a call ended, as the gate or the interceptor saw it; filled in while the call runs. */
interface Ending {
  code?: Code | 0;
}
const ENDING = createContextKey<Ending | undefined>(undefined, { description: 'how the call ended, for the metrics' });

/** What the metrics read of a Fastify request and its reply (over HTTP/2 or not). */
interface CallRequest {
  routeOptions: { url?: string };
  headers: { 'content-type'?: string };
}
interface CallReply {
  statusCode: number;
  elapsedTime: number;
  raw: { getHeader(name: string): unknown };
}

export type RpcMetrics = ReturnType<typeof createRpcMetrics>;

/**
 * Every call to the gRPC port counted by service, method, gRPC code and protocol, and timed from its
 * arrival to its answer. A call can end before any interceptor runs (refused by the request gate, or its
 * message over the limit), so the count and the time are taken when Fastify has sent the answer; the code
 * is what the gate or the interceptor saw, else what the answer says.
 */
export function createRpcMetrics(metrics: Pick<Metrics, 'rpcRequests' | 'rpcDuration'>) {
  const endings = new WeakMap<CallRequest, Ending>();

  return {
    /** Adds the call's ending to its context values (Connect's contextValues option). */
    track(request: CallRequest, values: ContextValues): ContextValues {
      const ending: Ending = {};
      endings.set(request, ending);
      return values.set(ENDING, ending);
    },

    /** The outermost interceptor: sees the code of every call that reached its handler. */
    interceptor: ((next) => async (req) => {
      const ending = req.contextValues.get(ENDING);
      try {
        const res = await next(req);
        if (ending) ending.code = 0;
        return res;
      } catch (err) {
        if (ending) ending.code = ConnectError.from(err).code;
        throw err;
      }
    }) satisfies Interceptor as Interceptor,

    /** A request gate that notes the code of the calls it refuses. */
    gate(gate: (ctx: HandlerContext) => Promise<void>): (ctx: HandlerContext) => Promise<void> {
      return async (ctx) => {
        try {
          await gate(ctx);
        } catch (err) {
          const ending = ctx.values.get(ENDING);
          if (ending) ending.code = ConnectError.from(err).code;
          throw err;
        }
      };
    },

    /** Counts and times a call once its answer is sent (Fastify's onResponse). */
    answered(request: CallRequest, reply: CallReply): void {
      const [service, method] = rpcOf(request);
      const code = endings.get(request)?.code ?? codeOfAnswer(request, reply);
      metrics.rpcRequests.inc({
        service,
        method,
        code: codeName(code),
        protocol: protocolOf(request.headers['content-type']),
      });
      metrics.rpcDuration.observe({ service, method }, reply.elapsedTime / 1000);
    },
  };
}

/** The service and method of a call's route (`/mail.v1.EmailService/SendEmail`); `unknown` for a path that is none. */
function rpcOf(request: CallRequest): [string, string] {
  const match = /^\/([^/]+)\/([^/]+)$/.exec(request.routeOptions.url ?? '');
  return match ? [match[1]!, match[2]!] : ['unknown', 'unknown'];
}

/** The code a call ended with when neither the gate nor an interceptor saw it: from the answer itself. */
function codeOfAnswer(request: CallRequest, reply: CallReply): Code | 0 {
  // A gRPC error without a message is answered Trailers-Only: its status is among the headers.
  const grpcStatus = Number(reply.raw.getHeader('grpc-status') ?? Number.NaN);
  if (Number.isInteger(grpcStatus) && grpcStatus >= 0 && grpcStatus <= 16) return grpcStatus as Code | 0;
  if (request.routeOptions.url === undefined) return Code.Unimplemented;
  return reply.statusCode === 200 ? Code.Unknown : codeFromHttpStatus(reply.statusCode);
}

/** The name of a gRPC code as Code spells it (OK, InvalidArgument, ResourceExhausted ...). */
function codeName(code: Code | 0): string {
  return code === 0 ? 'OK' : (Code[code] ?? 'Unknown');
}

function protocolOf(contentType: string | undefined): string {
  if (contentType?.startsWith('application/grpc-web')) return 'grpc_web';
  if (contentType?.startsWith('application/grpc')) return 'grpc';
  return 'connect';
}
