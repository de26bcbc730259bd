import { ScalarType, type DescField, type DescMessage } from '@bufbuild/protobuf';
import { ERROR_TABLE } from '../errors.js';
import { ADMIN_BASE, ADMIN_ROUTES, API_BASE, EMAIL_ROUTES, type RestRoute } from './rest-routes.js';

/**
 * The OpenAPI 3.1 document of the REST gateway, generated from the route table and the proto descriptors:
 * the schema is written once, in proto/, and this can never drift from it.
 */
type Schema = Record<string, unknown>;

function scalarSchema(t: ScalarType): Schema {
  switch (t) {
    case ScalarType.STRING: return { type: 'string' };
    case ScalarType.BOOL: return { type: 'boolean' };
    case ScalarType.BYTES: return { type: 'string', contentEncoding: 'base64' };
    case ScalarType.DOUBLE: case ScalarType.FLOAT: return { type: 'number' };
    case ScalarType.INT32: case ScalarType.SINT32: case ScalarType.SFIXED32: return { type: 'integer', format: 'int32' };
    case ScalarType.UINT32: case ScalarType.FIXED32: return { type: 'integer', format: 'uint32', minimum: 0 };
    default: return { type: 'string', format: 'int64' };
  }
}

function fieldSchema(f: DescField, refs: Set<DescMessage>): Schema {
  const ref = (m: DescMessage) => {
    refs.add(m);
    return { $ref: `#/components/schemas/${m.name}` };
  };
  switch (f.fieldKind) {
    case 'scalar': return scalarSchema(f.scalar);
    case 'enum': return { type: 'string' };
    case 'message': return ref(f.message);
    case 'list':
      return { type: 'array', items: f.listKind === 'scalar' ? scalarSchema(f.scalar) : f.listKind === 'message' ? ref(f.message) : { type: 'string' } };
    case 'map':
      return { type: 'object', additionalProperties: f.mapKind === 'scalar' ? scalarSchema(f.scalar) : f.mapKind === 'message' ? ref(f.message) : { type: 'string' } };
  }
}

function messageSchema(m: DescMessage, refs: Set<DescMessage>, omit: string[] = []): Schema {
  const properties: Record<string, Schema> = {};
  for (const f of m.fields) if (!omit.includes(f.name)) properties[f.name] = fieldSchema(f, refs);
  return { type: 'object', properties, additionalProperties: false };
}

const errorResponse = (description: string) => ({
  description,
  content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
});

function operation(route: RestRoute, refs: Set<DescMessage>, security: string): Schema {
  const input = route.rpc.input;
  const pathParams = route.idField ? [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }] : [];
  const fromQuery = route.method === 'GET' || route.method === 'DELETE';
  const queryParams = fromQuery
    ? input.fields.filter((f) => f.name !== route.idField).map((f) => ({ name: f.name, in: 'query', required: false, schema: fieldSchema(f, refs) }))
    : [];
  refs.add(route.rpc.output);
  return {
    operationId: route.rpc.localName,
    summary: route.summary,
    security: [{ [security]: [] }],
    parameters: [...pathParams, ...queryParams],
    ...(fromQuery
      ? {}
      : {
          requestBody: {
            required: true,
            content: { 'application/json': { schema: messageSchema(input, refs, route.idField ? [route.idField] : []) } },
          },
        }),
    responses: {
      200: { description: 'Success', content: { 'application/json': { schema: { $ref: `#/components/schemas/${route.rpc.output.name}` } } } },
      400: errorResponse('Validation error'),
      401: errorResponse('Missing, wrong or deleted credentials'),
      403: errorResponse('Not permitted'),
      404: errorResponse('Not found'),
      429: errorResponse(security === 'adminToken'
        ? 'Too many failed admin token attempts from this address, or from all (see Retry-After)'
        : 'Rate limit or daily quota exceeded'),
    },
  };
}

export function buildOpenApi(publicUrl: string): Schema {
  const refs = new Set<DescMessage>();
  const paths: Record<string, Record<string, Schema>> = {};
  const add = (base: string, routes: RestRoute[], security: string) => {
    for (const r of routes) {
      const p = `${base}${r.path}`.replace(/:id/g, '{id}');
      (paths[p] ??= {})[r.method.toLowerCase()] = operation(r, refs, security);
    }
  };
  add(API_BASE, EMAIL_ROUTES, 'apiKey');
  add(ADMIN_BASE, ADMIN_ROUTES, 'adminToken');
  const schemas: Record<string, Schema> = {
    Error: {
      type: 'object', required: ['error'],
      properties: { error: { type: 'string', examples: Object.values(ERROR_TABLE).map((e) => e.error) }, message: { type: 'string' } },
    },
  };
  // Referenced messages may reference more: expand until closed.
  const done = new Set<DescMessage>();
  while (done.size < refs.size) {
    for (const m of [...refs]) {
      if (done.has(m)) continue;
      done.add(m);
      schemas[m.name] = messageSchema(m, refs);
    }
  }
  return {
    openapi: '3.1.0',
    info: { title: 'mailer: transactional email API', version: 'v1', description: 'Generated from proto/mail/v1. Errors answer {error, message}.' },
    servers: [{ url: publicUrl }],
    paths,
    components: {
      schemas,
      securitySchemes: {
        apiKey: { type: 'http', scheme: 'bearer', description: 'An API key: Authorization: Bearer <API_KEY>' },
        adminToken: { type: 'http', scheme: 'bearer', description: 'The admin token (MAILER_ADMIN_TOKEN)' },
      },
    },
  };
}
