import { Readable } from 'node:stream';
import { fromJson, type JsonObject } from '@bufbuild/protobuf';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AdminSuppressionStreams } from '../api/admin-suppressions-api.js';
import type { CallContext } from '../api/call-context.js';
import { rateMetadata } from '../api/error-metadata.js';
import type { SuppressionStreams } from '../api/suppressions-api.js';
import { BODY_LIMITS } from '../domain/limits.js';
import { AppError } from '../errors.js';
import { admitting, encode } from './gateway.js';
import { assertKnownQuery, readsQuery } from './query-params.js';
import type { RestRoute } from './rest-routes.js';

/** Any service's handlers, as the gateway takes them, and the streams some CSV routes answer from. */
type AnyHandlers = Record<string, ((req: never, ctx: CallContext) => unknown) | undefined>;
type CsvStreams = SuppressionStreams & AdminSuppressionStreams;
type OpenStream = (ctx: CallContext, req: never) => Promise<AsyncIterable<string>>;

export const CSV_CONTENT_TYPE = 'text/csv; charset=utf-8';

/**
 * The routes of the table whose body or answer is CSV (RestRoute.csv): the suppression import reads a text/csv
 * body into its request's field and answers JSON; the export streams text/csv from a cursor. They sit in a
 * context of their own, the only one that reads text/csv (everywhere else a body is JSON whatever its
 * Content-Type says: rest-app.ts); here any other type is a 415, so a file sent as a form (curl's `-d`
 * default) is named for what it is rather than failing as broken CSV.
 */
export function registerCsvRoutes(
  app: FastifyInstance,
  base: string,
  routes: RestRoute[],
  handlers: object,
  admit: (ctx: CallContext) => Promise<unknown>,
): void {
  const csvRoutes = routes.filter((r) => r.csv);
  if (csvRoutes.length === 0) return;
  const byName = handlers as AnyHandlers & Partial<Record<keyof CsvStreams, OpenStream>>;
  void app.register(async (child) => {
    child.removeAllContentTypeParsers();
    child.addContentTypeParser('text/csv', { parseAs: 'string' }, (_req, body, done) => done(null, body));
    child.addContentTypeParser('*', (request, _payload, done) =>
      done(
        new AppError(
          'unsupported_media_type',
          `The request body must be text/csv (Content-Type: text/csv), not ${String(request.headers['content-type']).slice(0, 60)}`,
        ),
        undefined,
      ),
    );
    for (const route of csvRoutes) {
      const { body, stream } = route.csv!;
      const url = `${base}${route.path}`;
      const common = { method: route.method, url, bodyLimit: route.bodyLimit ?? BODY_LIMITS.other };
      if (stream !== undefined) {
        const open = byName[stream];
        if (!open) throw new Error(`no stream ${stream} for ${route.rpc.name}`);
        child.route({
          ...common,
          onRequest: admitting(admit),
          handler: async (request, reply) => {
            const ctx = request.callContext!;
            // The first chunk is read before answering: a refusal or an unreachable database is still a status.
            const lines = await open(ctx, requestOf(route, request) as never);
            if (ctx.rate) void reply.headers(rateMetadata(ctx.rate));
            return reply
              .type(CSV_CONTENT_TYPE)
              .header('content-disposition', 'attachment; filename="suppressions.csv"')
              .send(Readable.from(lines));
          },
        });
        continue;
      }
      const handler = byName[route.rpc.localName];
      if (!handler || body === undefined) throw new Error(`no handler for ${route.rpc.name}`);
      child.route({
        ...common,
        onRequest: admitting(admit),
        handler: async (request, reply) => {
          const ctx = request.callContext!;
          const text = typeof request.body === 'string' ? request.body : '';
          const out = await handler(requestOf(route, request, { [body]: text }) as never, ctx);
          if (ctx.rate) void reply.headers(rateMetadata(ctx.rate));
          return encode(route.rpc.output, out);
        },
      });
    }
  });
}

/** The RPC's request message: the path's id in its field (an account's, for the management API), and `fields`. */
function requestOf(route: RestRoute, request: FastifyRequest, fields: JsonObject = {}) {
  // The export's request has no field the query fills: any parameter is one it does not take.
  if (readsQuery(route)) assertKnownQuery(route, request.query as Record<string, unknown>);
  const params = request.params as Record<string, string | undefined>;
  const path = route.idField === undefined ? {} : { [route.idField]: params.id ?? '' };
  return fromJson(route.rpc.input, { ...path, ...fields });
}
