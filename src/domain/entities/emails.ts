import type { EmailStatus, JobType, Stream } from '../catalog.js';
import type { Mailbox } from '../address.js';
import type { Mailboxes, ValidDraft } from '../email-draft.js';
import type { TemplateStamp } from './templates.js';

/** Who and what accepted an email: its id, account, key and the job it belongs to. */
export interface EmailIdentity {
  id: string;
  accountId: string;
  apiKeyId: string | null;
  jobType: JobType;
  jobId: string;
}

/** An email accepted from a request, its attachments in hand. */
export interface NewEmail extends EmailIdentity {
  draft: ValidDraft;
}

/**
 * A validated draft without its attachments, as a scheduled email keeps it (the attachments are rows of their
 * own). One stored before migration 25 has no stream or topic: it is transactional.
 */
export type StoredDraft = Omit<ValidDraft, 'attachments' | 'stream' | 'topic'> &
  Partial<Pick<ValidDraft, 'stream' | 'topic'>>;

/** What an email row is built from: an accepted draft, or a scheduled one whose attachments are stored apart. */
export interface EmailSource extends EmailIdentity {
  draft: StoredDraft;
  attachmentCount: number;
}

export interface StoredAttachment {
  filename: string;
  contentType: string;
  content: Buffer;
  /** Empty: an ordinary attachment; else the inline part's Content-ID, without angle brackets. */
  contentId: string;
}

/** An attachments row as the queries select it (content_id is NULL for an ordinary attachment). */
export interface AttachmentRaw {
  filename: string;
  content_type: string;
  content: Buffer;
  content_id: string | null;
}

export interface EmailRow extends Mailboxes {
  id: string;
  accountId: string;
  jobType: JobType;
  jobId: string;
  /** The From address's domain, in lower case. */
  senderDomain: string;
  subject: string;
  html: string;
  text: string;
  headers: Record<string, string>;
  tags: Record<string, string>;
  status: EmailStatus;
  messageId: string;
  headerMessageId: string;
  attachmentCount: number;
  attempts: number;
  createdAt: Date;
  sentAt: Date | null;
  /** Recipients still to deliver to after an attempt some server deferred (null: all of them). */
  remainingRecipients: string[] | null;
  /** The trace context it was accepted under (migration 0012); null when that was not traced. */
  traceparent?: string | null;
  /** The template it was rendered from (migration 0023); null when the send gave its own content. */
  template?: TemplateStamp | null;
  /** Which mail it is (migration 0025): broadcast mail carries one-click unsubscribe. */
  stream: Stream;
  /** A broadcast email's topic; null when it has none. */
  topic: string | null;
}

export interface EmailSummaryRow {
  id: string;
  from: Mailbox;
  to: Mailbox[];
  subject: string;
  status: EmailStatus;
  createdAt: Date;
  stream: Stream;
  topic: string | null;
}

export interface EmailFilter {
  status?: EmailStatus;
  jobType?: JobType;
  jobId?: string;
  stream?: Stream;
}

export type EmailRaw = {
  id: string;
  account_id: string;
  job_type: JobType;
  job_id: string;
  mailboxes: Mailboxes;
  sender_domain: string;
  subject: string;
  html: string;
  text_body: string;
  headers: Record<string, string>;
  tags: Record<string, string>;
  status: EmailStatus;
  message_id: string;
  header_message_id: string;
  attachment_count: number;
  attempts: number;
  created_at: Date;
  sent_at: Date | null;
  remaining_recipients?: string[] | null;
  traceparent?: string | null;
  template?: TemplateStamp | null;
  stream: Stream;
  topic: string | null;
};

/** The idempotency record written in the same transaction as the emails it answered for. */
export interface IdempotencyCompletion {
  accountId: string;
  key: string;
  operation: string;
  requestHash: Buffer;
  response: unknown;
}
