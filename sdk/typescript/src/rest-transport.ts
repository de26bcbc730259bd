import {
  fromJson,
  toJson,
  type DescMessage,
  type DescMethodUnary,
  type JsonObject,
  type JsonValue,
  type MessageShape,
} from '@bufbuild/protobuf';
import { MailerError, networkError, parseRetryAfter } from './errors.js';
import type { EmailService } from './gen/mail/v1/email_service_pb.js';
import type { Invoker } from './transport.js';

/** The REST API's base path under the server's URL. */
export const API_PATH = '/v1/mail';

interface Route {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  /** Under API_PATH; `{name}` is filled from the request field of that (proto) name. */
  path: string;
}

/**
 * The REST paths of the RPCs the SDK calls, as the server's gateway maps them (its src/http/rest-routes.ts):
 * GET and DELETE take the request's other fields as query parameters, POST and PATCH as the JSON body.
 */
const ROUTES: { [K in keyof typeof EmailService.method]?: Route } = {
  sendEmail: { method: 'POST', path: '/emails' },
  scheduleEmail: { method: 'POST', path: '/emails/schedule' },
  sendBatch: { method: 'POST', path: '/emails/batch' },
  listEmails: { method: 'GET', path: '/emails' },
  getEmail: { method: 'GET', path: '/emails/{id}' },
  listEmailEvents: { method: 'GET', path: '/emails/{id}/events' },
  listScheduledEmails: { method: 'GET', path: '/emails/scheduled' },
  getScheduledEmail: { method: 'GET', path: '/emails/scheduled/{id}' },
  cancelScheduledEmail: { method: 'DELETE', path: '/emails/scheduled/{id}' },
  listBatchJobs: { method: 'GET', path: '/emails/batch' },
  getBatchJob: { method: 'GET', path: '/emails/batch/{id}' },
  listEvents: { method: 'GET', path: '/events' },
  createTemplate: { method: 'POST', path: '/templates' },
  listTemplates: { method: 'GET', path: '/templates' },
  getTemplate: { method: 'GET', path: '/templates/{id}' },
  updateTemplate: { method: 'PATCH', path: '/templates/{id}' },
  getTemplateVersion: { method: 'GET', path: '/templates/{id}/versions/{version}' },
  publishTemplate: { method: 'POST', path: '/templates/{id}/publish' },
  deleteTemplate: { method: 'DELETE', path: '/templates/{id}' },
  renderTemplate: { method: 'POST', path: '/templates/{id}/render' },
  previewTemplate: { method: 'POST', path: '/template-preview' },
  searchSuppressions: { method: 'GET', path: '/suppressions' },
  addSuppression: { method: 'POST', path: '/suppressions' },
  removeSuppression: { method: 'DELETE', path: '/suppressions/{email}' },
  createInboundRoute: { method: 'POST', path: '/inbound/routes' },
  listInboundRoutes: { method: 'GET', path: '/inbound/routes' },
  deleteInboundRoute: { method: 'DELETE', path: '/inbound/routes/{id}' },
  listInboundEmails: { method: 'GET', path: '/inbound/emails' },
  getInboundEmail: { method: 'GET', path: '/inbound/emails/{id}' },
  createWebhook: { method: 'POST', path: '/webhooks' },
  listWebhooks: { method: 'GET', path: '/webhooks' },
  deleteWebhook: { method: 'DELETE', path: '/webhooks/{id}' },
  verifyWebhook: { method: 'POST', path: '/webhooks/{id}/verify' },
};

function routeOf(method: DescMethodUnary): Route {
  const route = (ROUTES as Record<string, Route | undefined>)[method.localName];
  if (route === undefined) throw new TypeError(`${method.name} has no REST route in this SDK`);
  return route;
}

/** The request as the gateway reads it: the path with its fields filled, the rest as query or JSON body. */
function requestOf(route: Route, json: JsonObject): { path: string; query: URLSearchParams; body: JsonObject } {
  const rest: JsonObject = { ...json };
  const path = route.path.replace(/\{(\w+)\}/g, (_, name: string) => {
    const value = rest[name];
    delete rest[name];
    if (value === undefined || value === null || value === '')
      throw new TypeError(`${name} is required (it is part of the path ${route.path})`);
    return encodeURIComponent(String(value));
  });
  const query = new URLSearchParams();
  if (route.method === 'GET' || route.method === 'DELETE') {
    for (const [name, value] of Object.entries(rest)) {
      if (typeof value === 'object' && value !== null)
        throw new TypeError(`${name} cannot be a query parameter (${route.method} ${route.path})`);
      query.set(name, String(value));
    }
    return { path, query, body: {} };
  }
  return { path, query, body: rest };
}

const isObject = (v: JsonValue): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A MailerError from a refusal's answer: the spec's `{error, message}` body when it has one. */
async function refusal(res: Response): Promise<MailerError> {
  const text = await res.text().catch(() => '');
  let body: JsonValue = null;
  try {
    body = JSON.parse(text) as JsonValue;
  } catch {
    // Not the service's JSON (a proxy's page, say): its status and text say what happened.
  }
  const spec = isObject(body) ? body : {};
  return new MailerError({
    error: typeof spec.error === 'string' ? spec.error : `http ${res.status}`,
    message:
      typeof spec.message === 'string'
        ? spec.message
        : typeof spec.error === 'string'
          ? spec.error
          : text.slice(0, 500) || res.statusText,
    status: res.status,
    requestId: res.headers.get('x-request-id') ?? undefined,
    retryAfterMs: parseRetryAfter(res.headers.get('retry-after')),
  });
}

/**
 * The REST gateway over fetch. Messages are written and read with protobuf-es's JSON mapping as the server's
 * gateway does (src/http/gateway.ts): requests with the proto field names (the spec's JSON names, and the
 * only spelling the query string takes), responses read back into the same message types; fields a newer
 * server adds are ignored rather than refused.
 */
export function restInvoker(baseUrl: string, fetchFn: typeof fetch): Invoker {
  const base = baseUrl.replace(/\/+$/, '') + API_PATH;
  return {
    async unary<I extends DescMessage, O extends DescMessage>(
      method: DescMethodUnary<I, O>,
      input: MessageShape<I>,
      headers: Headers,
      signal: AbortSignal | undefined,
    ): Promise<MessageShape<O>> {
      const route = routeOf(method);
      const json = toJson(method.input, input, { useProtoFieldName: true });
      const { path, query, body } = requestOf(route, isObject(json) ? json : {});
      const search = query.toString() === '' ? '' : `?${query.toString()}`;
      const hasBody = route.method === 'POST' || route.method === 'PATCH';
      if (hasBody) headers.set('content-type', 'application/json');
      headers.set('accept', 'application/json');
      let res: Response;
      try {
        res = await fetchFn(`${base}${path}${search}`, {
          method: route.method,
          headers,
          body: hasBody ? JSON.stringify(body) : undefined,
          signal,
        });
      } catch (err) {
        if (signal?.aborted) throw err;
        throw networkError(err);
      }
      if (!res.ok) throw await refusal(res);
      let answer: JsonValue;
      try {
        answer = (await res.json()) as JsonValue;
      } catch (err) {
        // The connection failed while the answer was read: as good as no answer.
        if (signal?.aborted) throw err;
        throw networkError(err);
      }
      return fromJson(method.output, answer, { ignoreUnknownFields: true });
    },
  };
}
