import { createRegistry, fromJson, toJson, type JsonValue, type Message } from '@bufbuild/protobuf';
import { Code, ConnectError, createClient, type Client, type Interceptor } from '@connectrpc/connect';
import { createConnectTransport, Http2SessionManager } from '@connectrpc/connect-node';
import { file_mail_v1_account } from '../../src/gen/mail/v1/account_pb.js';
import { file_mail_v1_egress } from '../../src/gen/mail/v1/egress_pb.js';
import { AdminService, file_mail_v1_admin_service } from '../../src/gen/mail/v1/admin_service_pb.js';
import { file_mail_v1_inbound } from '../../src/gen/mail/v1/inbound_pb.js';
import { file_mail_v1_types } from '../../src/gen/mail/v1/types_pb.js';
import { file_mail_v1_suppressions } from '../../src/gen/mail/v1/suppressions_pb.js';
import {
  CreateTemplateRequestSchema,
  file_mail_v1_templates,
  UpdateTemplateRequestSchema,
  type CreateTemplateRequest,
  type UpdateTemplateRequest,
} from '../../src/gen/mail/v1/templates_pb.js';
import {
  EmailService,
  file_mail_v1_email_service,
  SendEmailRequestSchema,
  type SendEmailRequest,
} from '../../src/gen/mail/v1/email_service_pb.js';

// Everything of the CLI that talks to the service, loaded only when a command runs (never for --help),
// so that the CLI starts fast: the Connect clients of the generated services, and the JSON of their
// messages.

export type EmailClient = Client<typeof EmailService>;
export type AdminClient = Client<typeof AdminService>;

/** Closes what the clients opened, so that the process can exit at once. */
export type Closer = () => void;

/** A Connect client over HTTP/2 (h2c for http://) that sends `authorization: Bearer <token>`. */
function transport(
  baseUrl: string,
  token: string,
): { transport: ReturnType<typeof createConnectTransport>; close: Closer } {
  const auth: Interceptor = (next) => (req) => {
    req.header.set('authorization', `Bearer ${token}`);
    return next(req);
  };
  const sessionManager = new Http2SessionManager(baseUrl);
  return {
    transport: createConnectTransport({
      baseUrl,
      httpVersion: '2',
      sessionManager,
      interceptors: [auth],
      defaultTimeoutMs: 60_000,
    }),
    close: () => sessionManager.abort(),
  };
}

export function emailClient(baseUrl: string, apiKey: string): { client: EmailClient; close: Closer } {
  const t = transport(baseUrl, apiKey);
  return { client: createClient(EmailService, t.transport), close: t.close };
}

export function adminClient(baseUrl: string, adminToken: string): { client: AdminClient; close: Closer } {
  const t = transport(baseUrl, adminToken);
  return { client: createClient(AdminService, t.transport), close: t.close };
}

// Each file its messages are declared in (a file's registry entry does not bring the files it imports).
const registry = createRegistry(
  file_mail_v1_types,
  file_mail_v1_account,
  file_mail_v1_templates,
  file_mail_v1_suppressions,
  file_mail_v1_inbound,
  file_mail_v1_egress,
  file_mail_v1_email_service,
  file_mail_v1_admin_service,
);

/** A message of either service as the REST API writes it: the spec's field names, defaults included. */
export function messageToJson(message: Message): JsonValue {
  const schema = registry.getMessage(message.$typeName);
  if (!schema) throw new Error(`unknown message type ${message.$typeName}`);
  return toJson(schema, message, { useProtoFieldName: true, alwaysEmitImplicit: true });
}

/** An email of a batch file, read as the REST API reads one (unknown fields refused). */
export function sendEmailRequestFromJson(json: JsonValue): SendEmailRequest {
  return fromJson(SendEmailRequestSchema, json);
}

/**
 * The body of POST /templates (or PATCH, with `id`) as its request message: JSON is how the template commands
 * carry a declared variable's `default` (any JSON value) and an edit's replaced variables and localizations.
 */
export function createTemplateRequestFromJson(json: JsonValue): CreateTemplateRequest {
  return fromJson(CreateTemplateRequestSchema, json);
}

export function updateTemplateRequestFromJson(json: JsonValue): UpdateTemplateRequest {
  return fromJson(UpdateTemplateRequestSchema, json);
}

/** `<error>: <message>`, the spec's error body on one line, for any failure of a call. */
export function describeFailure(err: unknown): string {
  if (err instanceof ConnectError) {
    const error = err.metadata.get('mail-error');
    if (error) return err.rawMessage && err.rawMessage !== error ? `${error}: ${err.rawMessage}` : error;
    // Not an answer of the service (nothing listening, a proxy, a timeout): the Connect code names it.
    return `${codeName(err.code)}: ${err.rawMessage}`;
  }
  return `error: ${err instanceof Error ? err.message : String(err)}`;
}

/** Code.DeadlineExceeded → "deadline exceeded". */
function codeName(code: Code): string {
  return (Code[code] ?? 'Unknown').replace(/[A-Z]/g, (c, i: number) =>
    i === 0 ? c.toLowerCase() : ` ${c.toLowerCase()}`,
  );
}
