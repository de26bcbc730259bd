import type { MessageInitShape } from '@bufbuild/protobuf';
import type {
  CreateWebhookRequestSchema,
  DeleteResponse,
  ListWebhooksRequestSchema,
  ListWebhooksResponse,
  VerifyWebhookResponse,
  Webhook,
} from '../gen/mail/v1/account_pb.js';
import { EmailService, type MailEvent } from '../gen/mail/v1/email_service_pb.js';
import type { Call, RequestOptions } from '../transport.js';
import { verify, type VerifyOptions, type WebhookHeaders } from '../webhooks.js';

const rpc = EmailService.method;

/** `mailer.webhooks`: the account's webhooks, and verifying the requests they receive. */
export class WebhookEndpoints {
  constructor(private readonly call: Call) {}

  /** Creates a webhook for `events` (empty: all); its signing `secret` is in this answer only. */
  create(webhook: MessageInitShape<typeof CreateWebhookRequestSchema>, options?: RequestOptions): Promise<Webhook> {
    return this.call(rpc.createWebhook, webhook, 'unsafe', options);
  }

  list(
    query: MessageInitShape<typeof ListWebhooksRequestSchema> = {},
    options?: RequestOptions,
  ): Promise<ListWebhooksResponse> {
    return this.call(rpc.listWebhooks, query, 'safe', options);
  }

  delete(id: string, options?: RequestOptions): Promise<DeleteResponse> {
    return this.call(rpc.deleteWebhook, { id }, 'safe', options);
  }

  /** Sends the webhook a signed test event (`event: 'test'`) and answers the status its receiver gave. */
  sendTest(id: string, options?: RequestOptions): Promise<VerifyWebhookResponse> {
    return this.call(rpc.verifyWebhook, { id }, 'safe', options);
  }

  /** Verifies a received webhook request and returns its event: see Webhooks.verify (webhooks.ts). */
  verify(
    body: string | Uint8Array,
    headers: WebhookHeaders,
    secret: string,
    options?: VerifyOptions,
  ): Promise<MailEvent> {
    return verify(body, headers, secret, options);
  }
}
