import type { MessageInitShape } from '@bufbuild/protobuf';
import {
  EmailService,
  type CancelScheduledEmailResponse,
  type ListBatchJobsRequestSchema,
  type ListBatchJobsResponse,
  type ListEmailEventsResponse,
  type ListEmailsRequestSchema,
  type ListEmailsResponse,
  type ListScheduledEmailsRequestSchema,
  type ListScheduledEmailsResponse,
  type ScheduleEmailRequestSchema,
  type ScheduleEmailResponse,
  type SendBatchResponse,
  type SendEmailRequestSchema,
  type SendEmailResponse,
} from '../gen/mail/v1/email_service_pb.js';
import type { BatchJob, Email, ScheduledEmail } from '../gen/mail/v1/types_pb.js';
import type { Call, RequestOptions } from '../transport.js';

const rpc = EmailService.method;

/** An email to send: from, to, subject and html or text (or a template), as POST /emails takes it. */
export type SendEmailInput = MessageInitShape<typeof SendEmailRequestSchema>;
/** An email to send later: SendEmailInput plus scheduledAt (ISO 8601, in the future). */
export type ScheduleEmailInput = MessageInitShape<typeof ScheduleEmailRequestSchema>;
export type ListEmailsInput = MessageInitShape<typeof ListEmailsRequestSchema>;

/** `mailer.emails`: send now, later or in batches, and read what was sent. */
export class Emails {
  constructor(private readonly call: Call) {}

  /** Sends one email (POST /emails); answers its id once it is accepted. Idempotent: see RequestOptions. */
  send(email: SendEmailInput, options?: RequestOptions): Promise<SendEmailResponse> {
    return this.call(rpc.sendEmail, email, 'send', options);
  }

  /** Schedules one email for `scheduledAt` (POST /emails/schedule); mailer.scheduled lists and cancels it. */
  schedule(email: ScheduleEmailInput, options?: RequestOptions): Promise<ScheduleEmailResponse> {
    return this.call(rpc.scheduleEmail, email, 'send', options);
  }

  /** Sends up to 100 emails as one batch job (POST /emails/batch); mailer.batches follows the job. */
  batch(emails: SendEmailInput[], options?: RequestOptions): Promise<SendBatchResponse> {
    return this.call(rpc.sendBatch, { emails }, 'send', options);
  }

  /** One email with its content and status (GET /emails/:id). */
  get(id: string, options?: RequestOptions): Promise<Email> {
    return this.call(rpc.getEmail, { id }, 'safe', options);
  }

  /** Sent emails, newest first, a page at a time (GET /emails: page, pageSize, status, jobType, jobId, stream). */
  list(query: ListEmailsInput = {}, options?: RequestOptions): Promise<ListEmailsResponse> {
    return this.call(rpc.listEmails, query, 'safe', options);
  }

  /** One email's events (send, delivery, bounce, open, ...), oldest first (GET /emails/:id/events). */
  events(id: string, options?: RequestOptions): Promise<ListEmailEventsResponse> {
    return this.call(rpc.listEmailEvents, { id }, 'safe', options);
  }
}

/** `mailer.scheduled`: emails scheduled with emails.schedule. */
export class Scheduled {
  constructor(private readonly call: Call) {}

  /** GET /emails/scheduled (page, limit, status). */
  list(
    query: MessageInitShape<typeof ListScheduledEmailsRequestSchema> = {},
    options?: RequestOptions,
  ): Promise<ListScheduledEmailsResponse> {
    return this.call(rpc.listScheduledEmails, query, 'safe', options);
  }

  get(id: string, options?: RequestOptions): Promise<ScheduledEmail> {
    return this.call(rpc.getScheduledEmail, { id }, 'safe', options);
  }

  /** Cancels a scheduled email that is not sent yet (DELETE /emails/scheduled/:id). */
  cancel(id: string, options?: RequestOptions): Promise<CancelScheduledEmailResponse> {
    return this.call(rpc.cancelScheduledEmail, { id }, 'safe', options);
  }
}

/** `mailer.batches`: the jobs emails.batch started. */
export class Batches {
  constructor(private readonly call: Call) {}

  /** GET /emails/batch (page, limit, status). */
  list(
    query: MessageInitShape<typeof ListBatchJobsRequestSchema> = {},
    options?: RequestOptions,
  ): Promise<ListBatchJobsResponse> {
    return this.call(rpc.listBatchJobs, query, 'safe', options);
  }

  /** A batch job with its sent and failed counts (GET /emails/batch/:id). */
  get(id: string, options?: RequestOptions): Promise<BatchJob> {
    return this.call(rpc.getBatchJob, { id }, 'safe', options);
  }
}
