import { create, fromJson, toJson, type DescMessage, type JsonValue } from '@bufbuild/protobuf';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { createContextValues } from '@connectrpc/connect';
import { CLIENT_ADDRESS, type CallContext } from '../api/call-context.js';
import { rateMetadata } from '../api/error-metadata.js';
import { BODY_LIMITS } from '../domain/limits.js';
import { invalid } from '../errors.js';
import { describeJsonError } from './json-errors.js';
import { passStructsThrough } from './json-passthrough.js';
import { assertKnownQuery, readsQuery } from './query-params.js';
import type { RestRoute } from './rest-routes.js';

declare module 'fastify' {
  interface FastifyRequest {
    callContext: CallContext | null;
  }
}

/** Any service's handlers (api/call-context.ts Handlers<S>): one function per RPC, named as the schema names them (sendEmail, getEmail, ...). */
type AnyHandlers = Record<string, ((req: never, ctx: CallContext) => unknown) | undefined>;

function requestHeaders(request: FastifyRequest): Headers {
  const h = new Headers();
  for (const [name, value] of Object.entries(request.headers)) {
    if (typeof value === 'string') h.set(name, value);
    else if (Array.isArray(value)) h.set(name, value.join(', '));
  }
  return h;
}

/** Sets `value` at a dotted field path of `input` (`template.id`), making the objects on the way. */
function setPath(input: Record<string, unknown>, path: string, value: unknown): void {
  const [head, ...rest] = path.split('.');
  if (head === undefined) return;
  if (rest.length === 0) {
    input[head] = value;
    return;
  }
  const inner = input[head];
  const next: Record<string, unknown> = typeof inner === 'object' && inner !== null ? { ...inner } : {};
  input[head] = next;
  setPath(next, rest.join('.'), value);
}

/** The spec's JSON (body, or query for GET and DELETE) read into the RPC's request message, path parameters set. */
export function decode(route: RestRoute, request: FastifyRequest): unknown {
  const fromQuery = readsQuery(route);
  let input: Record<string, unknown>;
  if (fromQuery) {
    const query = request.query as Record<string, unknown>;
    assertKnownQuery(route, query);
    input = { ...query };
  } else {
    const body = request.body;
    if (typeof body !== 'object' || body === null || Array.isArray(body))
      throw invalid('The request body must be a JSON object');
    input = route.bodyField ? { [route.bodyField]: { ...body } } : { ...(body as Record<string, unknown>) };
  }
  const params = request.params as Record<string, string | undefined>;
  if (route.idField) input[route.idField] = params.id;
  // A path segment is text; the JSON reader takes an integer field as a string of digits and refuses others.
  for (const [name, field] of Object.entries(route.params ?? {})) setPath(input, field, params[name]);
  try {
    // Unknown body fields and query parameters are refused (a misspelt one would otherwise be dropped silently):
    // the query's names by assertKnownQuery above, which also refuses the JSON spelling of a name.
    const passed = passStructsThrough(route.rpc.input, input);
    const message = fromJson(route.rpc.input, passed.input as JsonValue);
    passed.restore(message);
    return message;
  } catch (err) {
    throw invalid(describeJsonError(err));
  }
}

export function encode(schema: DescMessage, value: unknown): JsonValue {
  return toJson(schema, create(schema, value as never), { useProtoFieldName: true, alwaysEmitImplicit: true });
}

/**
 * The onRequest hook that makes a request's CallContext and admits it (key or token) before its body is read.
 * `rpc` is the local name of the RPC the route calls.
 */
export function admitting(admit: (ctx: CallContext) => Promise<unknown>, rpc?: string) {
  return async (request: FastifyRequest): Promise<void> => {
    const ctx: CallContext = {
      requestHeader: requestHeaders(request),
      values: createContextValues().set(CLIENT_ADDRESS, request.ip),
      ...(rpc === undefined ? {} : { rpc }),
    };
    request.callContext = ctx;
    await admit(ctx);
  };
}

/**
 * Registers the routes of one service: each decodes the spec's JSON, calls the shared handler, encodes.
 * `admit` runs first, before the body is read, so that credentials are judged before content.
 */
export function registerGateway(
  app: FastifyInstance,
  base: string,
  routes: RestRoute[],
  handlers: object,
  admit: (ctx: CallContext) => Promise<unknown>,
): void {
  for (const route of routes) {
    // CSV in or out: csv-routes.ts; streamed bytes out: bytes-routes.ts.
    if (route.csv || route.bytes) continue;
    const handler = (handlers as AnyHandlers)[route.rpc.localName];
    if (!handler) throw new Error(`no handler for ${route.rpc.name}`);
    app.route({
      method: route.method,
      url: `${base}${route.path}`,
      bodyLimit: route.bodyLimit ?? BODY_LIMITS.other,
      onRequest: admitting(admit, route.rpc.localName),
      handler: async (request, reply) => {
        const ctx = request.callContext!;
        const out = await handler(decode(route, request) as never, ctx);
        if (ctx.rate) void reply.headers(rateMetadata(ctx.rate));
        return encode(route.rpc.output, out);
      },
    });
  }
}
