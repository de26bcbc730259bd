import type { DescMethod, DescService } from '@bufbuild/protobuf';
import { describe, expect, it } from 'vitest';
import { BytesInFlight } from '../../src/bytes-in-flight.js';
import { AdminService } from '../../src/gen/mail/v1/admin_service_pb.js';
import { EmailService } from '../../src/gen/mail/v1/email_service_pb.js';
import { buildOpenApi } from '../../src/http/openapi.js';
import type { Schema } from '../../src/http/openapi-constraints.js';
import { buildRestApp } from '../../src/http/rest-app.js';
import { ADMIN_BASE, ADMIN_ROUTES, API_BASE, PUBLIC_ROUTES, type RestRoute } from '../../src/http/rest-routes.js';
import { createLogger } from '../../src/logger.js';
import { createMetrics } from '../../src/metrics.js';

/**
 * CONTRACT.md "Stats and timelines": an unknown query parameter on any GET is a 400 naming it. Every route of
 * both route tables that reads its request from the query (GET and DELETE; the JSON, CSV-export and bytes
 * routes alike) is asked in memory over handlers that only record what they were given: an undeclared name is
 * refused before the handler runs, and every name the OpenAPI document declares still reaches it.
 */

/** What each RPC was called with, by its local name. */
type Calls = Map<string, unknown[]>;

/** Handlers of every RPC of a service: unary ones answer the empty message, streaming ones one chunk of bytes. */
function recordingHandlers(service: DescService, calls: Calls): Record<string, unknown> {
  const record = (m: DescMethod, req: unknown) => calls.set(m.localName, [...(calls.get(m.localName) ?? []), req]);
  const handlers: Record<string, unknown> = {};
  for (const m of service.methods) {
    handlers[m.localName] =
      m.methodKind === 'server_streaming'
        ? async function* (req: unknown) {
            record(m, req);
            yield { contentType: 'text/plain', data: new TextEncoder().encode('x') };
          }
        : async (req: unknown) => {
            record(m, req);
            return {};
          };
  }
  return handlers;
}

/** The CSV exports' streams (no RPC of their own on REST), recorded under their RPC's name. */
const csvStream = (name: string, calls: Calls) => async (_ctx: unknown, req: unknown) => {
  calls.set(name, [...(calls.get(name) ?? []), req]);
  return (async function* () {
    yield 'email,reason,scope,topic,created_at\n';
  })();
};

async function buildApp() {
  const calls: Calls = new Map();
  const app = await buildRestApp({
    emailApi: {
      ...recordingHandlers(EmailService, calls),
      streamSuppressionsCsv: csvStream('exportSuppressions', calls),
    } as never,
    adminApi: {
      ...recordingHandlers(AdminService, calls),
      streamAccountSuppressionsCsv: csvStream('exportAccountSuppressions', calls),
    } as never,
    // Every caller admitted: what is judged here is the query alone.
    admitApi: async () => {},
    admitAdmin: async () => {},
    logger: createLogger('silent', 'test'),
    metrics: createMetrics(),
    publicUrl: 'http://mailer.test',
    admitMetrics: () => {},
    checkReady: async () => [],
    bytesInFlight: new BytesInFlight({ process: 1024 * 1024, perKey: 1024 * 1024 }),
  });
  return { app, calls };
}

const doc = buildOpenApi('http://mailer.test') as { paths: Record<string, Record<string, Schema>> };

interface Case {
  route: RestRoute;
  operation: Schema & { parameters: Schema[] };
  /** The URL without a query: each path parameter a value its schema takes. */
  url: string;
}

/** Every route of both tables whose request is read from the query, with its operation in the document. */
const cases: Case[] = [
  ...PUBLIC_ROUTES.map((route) => ({ route, base: API_BASE })),
  ...ADMIN_ROUTES.map((route) => ({ route, base: ADMIN_BASE })),
]
  .filter(({ route }) => route.method === 'GET' || route.method === 'DELETE')
  .map(({ route, base }) => {
    const operation = doc.paths[`${base}${route.path}`.replace(/:(\w+)/g, '{$1}')]![
      route.method.toLowerCase()
    ] as Case['operation'];
    const pathParams = new Map(
      operation.parameters.filter((p) => p.in === 'path').map((p) => [p.name as string, p.schema as Schema]),
    );
    const url = `${base}${route.path}`.replace(/:(\w+)/g, (_, name: string) =>
      pathParams.get(name)?.type === 'integer' ? '1' : 'x_1',
    );
    return { route, operation, url };
  });

/** A value the parameter's schema takes, as query text. */
function valueFor(schema: Schema): string {
  if (Array.isArray(schema.enum)) return String(schema.enum.find((v) => v !== '') ?? '');
  if (schema.type === 'integer') return String(typeof schema.minimum === 'number' ? Math.max(schema.minimum, 1) : 1);
  if (schema.type === 'boolean') return 'true';
  return 'x';
}

const label = (c: Case) => `${c.route.method} ${c.url}`;

describe('unknown query parameters', () => {
  it('covers GET and DELETE routes of both APIs, the CSV export and the stored bytes among them', () => {
    expect(cases.some((c) => c.url.startsWith(`${ADMIN_BASE}/`))).toBe(true);
    expect(cases.some((c) => !c.url.startsWith(`${ADMIN_BASE}/`))).toBe(true);
    expect(cases.some((c) => c.route.csv?.stream)).toBe(true);
    expect(cases.some((c) => c.route.bytes)).toBe(true);
    expect(cases.some((c) => c.route.method === 'DELETE')).toBe(true);
  });

  it.each(cases.map((c) => [label(c), c] as const))(
    '%s: an undeclared parameter is a 400 naming it, before the handler runs',
    async (_, c) => {
      const { app, calls } = await buildApp();
      try {
        const res = await app.inject({ method: c.route.method, url: `${c.url}?stauts=bounced` });
        expect(res.statusCode, res.body).toBe(400);
        expect(res.json()).toEqual({
          error: 'validation error',
          message: expect.stringMatching(/^unknown query parameter stauts: it takes /),
        });
        expect(calls.size).toBe(0);
      } finally {
        await app.close();
      }
    },
  );

  it.each(cases.map((c) => [label(c), c] as const))(
    '%s: every parameter the document declares is taken, all at once',
    async (_, c) => {
      const declared = c.operation.parameters.filter((p) => p.in === 'query');
      const query = new URLSearchParams(
        declared.map((p): [string, string] => [p.name as string, valueFor(p.schema as Schema)]),
      );
      const { app, calls } = await buildApp();
      try {
        const res = await app.inject({ method: c.route.method, url: `${c.url}?${query}` });
        expect(res.statusCode, res.body).toBe(200);
        const name = c.route.rpc.localName;
        expect(calls.get(name), `${name} was called`).toHaveLength(1);
        // The message the handler got holds each value (by its field's JSON name).
        const got = calls.get(name)![0] as Record<string, unknown>;
        for (const p of declared) {
          const field = c.route.rpc.input.fields.find((f) => f.name === p.name)!;
          expect(String(got[field.localName]), `${p.name as string}`).toBe(query.get(p.name as string));
        }
      } finally {
        await app.close();
      }
    },
  );

  it('names each unknown parameter, in odd spellings too, and says which ones the route takes', async () => {
    const { app } = await buildApp();
    try {
      const ask = async (url: string) => {
        const res = await app.inject({ method: 'GET', url });
        expect(res.statusCode, url).toBe(400);
        return (res.json() as { message: string }).message;
      };
      // The proto3 JSON spelling was never documented: only the snake_case names are.
      expect(await ask(`${API_BASE}/emails?pageSize=10`)).toBe(
        'unknown query parameter pageSize: it takes page, page_size, status, job_type, job_id, stream',
      );
      // A cache buster is a parameter like any other.
      expect(await ask(`${API_BASE}/events?_=1700000000000&limit=5`)).toBe(
        'unknown query parameter _: it takes after, limit, type, email_id',
      );
      expect(await ask(`${API_BASE}/emails/em_1?a=1&b%20c=2`)).toBe('unknown query parameters a, "b c": it takes none');
      // A path parameter is not also a query parameter.
      expect(await ask(`${ADMIN_BASE}/accounts/acc_1/emails?account_id=acc_2`)).toMatch(
        /^unknown query parameter account_id: /,
      );
      expect(await ask(`${API_BASE}/suppressions/export?format=json`)).toBe(
        'unknown query parameter format: it takes none',
      );
    } finally {
      await app.close();
    }
  });

  it('leaves the routes outside the API tables alone: probes and the OpenAPI document take any query', async () => {
    const { app } = await buildApp();
    try {
      expect((await app.inject({ method: 'GET', url: '/healthz?probe=1' })).statusCode).toBe(200);
      expect((await app.inject({ method: 'GET', url: `${API_BASE}/openapi.json?v=2` })).statusCode).toBe(200);
    } finally {
      await app.close();
    }
  });
});
