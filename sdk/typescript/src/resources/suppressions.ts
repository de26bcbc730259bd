import type { MessageInitShape } from '@bufbuild/protobuf';
import { EmailService } from '../gen/mail/v1/email_service_pb.js';
import type {
  AddSuppressionRequestSchema,
  RemoveSuppressionRequestSchema,
  RemoveSuppressionResponse,
  SearchSuppressionsRequestSchema,
  SearchSuppressionsResponse,
  SuppressionEntry,
} from '../gen/mail/v1/suppressions_pb.js';
import type { Call, InputWithout, RequestOptions } from '../transport.js';

const rpc = EmailService.method;

/** `mailer.suppressions`: the addresses the account's mail is not sent to (all of it, or its broadcasts). */
export class Suppressions {
  constructor(private readonly call: Call) {}

  /** Suppressions, newest first, by email, reason, scope or topic (GET /suppressions). */
  list(
    search: MessageInitShape<typeof SearchSuppressionsRequestSchema> = {},
    options?: RequestOptions,
  ): Promise<SearchSuppressionsResponse> {
    return this.call(rpc.searchSuppressions, search, 'safe', options);
  }

  /** Suppresses an address (reason manual): all its mail, or its broadcast mail (scope, topic). */
  add(
    suppression: MessageInitShape<typeof AddSuppressionRequestSchema>,
    options?: RequestOptions,
  ): Promise<SuppressionEntry> {
    return this.call(rpc.addSuppression, suppression, 'safe', options);
  }

  /** Removes an address's suppression of `scope` (and `topic`), or all of them when no scope is given. */
  remove(
    email: string,
    which: InputWithout<typeof RemoveSuppressionRequestSchema, 'email'> = {},
    options?: RequestOptions,
  ): Promise<RemoveSuppressionResponse> {
    return this.call(rpc.removeSuppression, { ...which, email }, 'safe', options);
  }
}
