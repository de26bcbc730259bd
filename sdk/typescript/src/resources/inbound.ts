import type { MessageInitShape } from '@bufbuild/protobuf';
import { EmailService } from '../gen/mail/v1/email_service_pb.js';
import type {
  DeleteInboundRouteResponse,
  InboundEmail,
  InboundRoute,
  ListInboundEmailsRequestSchema,
  ListInboundEmailsResponse,
  ListInboundRoutesRequestSchema,
  ListInboundRoutesResponse,
} from '../gen/mail/v1/inbound_pb.js';
import type { Call, RequestOptions } from '../transport.js';

const rpc = EmailService.method;

/** `mailer.inbound.routes`: the addresses of the account's domains it receives mail at. */
export class InboundRoutes {
  constructor(private readonly call: Call) {}

  /** Receives mail at `local@domain` or `*@domain` (a verified domain of the account, or a subdomain of one). */
  create(match: string, options?: RequestOptions): Promise<InboundRoute> {
    return this.call(rpc.createInboundRoute, { match }, 'unsafe', options);
  }

  /** GET /inbound/routes (page, pageSize), newest first. */
  list(
    query: MessageInitShape<typeof ListInboundRoutesRequestSchema> = {},
    options?: RequestOptions,
  ): Promise<ListInboundRoutesResponse> {
    return this.call(rpc.listInboundRoutes, query, 'safe', options);
  }

  /** Deletes a route: its address takes no more mail (mail it received stays). */
  delete(id: string, options?: RequestOptions): Promise<DeleteInboundRouteResponse> {
    return this.call(rpc.deleteInboundRoute, { id }, 'safe', options);
  }
}

/** `mailer.inbound.emails`: the mail the routes received, parsed. */
export class InboundEmails {
  constructor(private readonly call: Call) {}

  /** GET /inbound/emails (page, pageSize), newest first. */
  list(
    query: MessageInitShape<typeof ListInboundEmailsRequestSchema> = {},
    options?: RequestOptions,
  ): Promise<ListInboundEmailsResponse> {
    return this.call(rpc.listInboundEmails, query, 'safe', options);
  }

  /** One inbound email as parsed when it arrived. */
  get(id: string, options?: RequestOptions): Promise<InboundEmail> {
    return this.call(rpc.getInboundEmail, { id }, 'safe', options);
  }
}

/** `mailer.inbound`: mail received at the account's domains. */
export class Inbound {
  readonly routes: InboundRoutes;
  readonly emails: InboundEmails;

  constructor(call: Call) {
    this.routes = new InboundRoutes(call);
    this.emails = new InboundEmails(call);
  }
}
