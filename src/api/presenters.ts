import type { MessageInitShape } from '@bufbuild/protobuf';
import type { BatchRow } from '../domain/entities/batches.js';
import type { EmailRow, EmailSummaryRow, StoredAttachment } from '../domain/entities/emails.js';
import type { ScheduledRow } from '../domain/entities/scheduled.js';
import { formatMailbox, type Mailbox } from '../domain/address.js';
import type { BatchJobSchema, EmailSchema, EmailSummarySchema, ScheduledEmailSchema } from '../gen/mail/v1/types_pb.js';

/** Stored rows as the schema's messages: the one place that decides what a caller sees of a record. */

export const iso = (d: Date) => d.toISOString();

/** Addresses are shown as they were parsed at acceptance: `address` or `Name <address>`. */
const shown = (list: Mailbox[]) => list.map(formatMailbox);

export function presentEmail(email: EmailRow, attachments: StoredAttachment[]): MessageInitShape<typeof EmailSchema> {
  return {
    id: email.id,
    messageId: email.messageId,
    from: formatMailbox(email.from),
    to: shown(email.to),
    cc: shown(email.cc),
    bcc: shown(email.bcc),
    replyTo: shown(email.replyTo),
    subject: email.subject,
    html: email.html,
    text: email.text,
    status: email.status,
    malStatus: 'healthy',
    createdAt: iso(email.createdAt),
    headers: email.headers,
    tags: email.tags,
    attachments: attachments.map((a) => ({
      filename: a.filename,
      content: a.content.toString('base64'),
      contentType: a.contentType,
      contentId: a.contentId,
    })),
    jobType: email.jobType,
    jobId: email.jobId,
    ...(email.template ? { template: email.template } : {}),
    stream: email.stream,
    ...(email.topic !== null ? { topic: email.topic } : {}),
  };
}

export function presentEmailSummary(e: EmailSummaryRow): MessageInitShape<typeof EmailSummarySchema> {
  return {
    id: e.id,
    from: formatMailbox(e.from),
    to: shown(e.to),
    subject: e.subject,
    status: e.status,
    createdAt: iso(e.createdAt),
    stream: e.stream,
    ...(e.topic !== null ? { topic: e.topic } : {}),
  };
}

export function presentScheduled(s: ScheduledRow): MessageInitShape<typeof ScheduledEmailSchema> {
  return {
    id: s.id,
    from: formatMailbox(s.from),
    to: shown(s.to),
    subject: s.subject,
    scheduledAt: iso(s.scheduledAt),
    status: s.status,
    createdAt: iso(s.createdAt),
    attempts: s.attempts,
  };
}

export function presentBatch(b: BatchRow): MessageInitShape<typeof BatchJobSchema> {
  return {
    jobId: b.id,
    totalCount: b.totalCount,
    sentCount: b.sentCount,
    failedCount: b.failedCount,
    status: b.status,
    createdAt: iso(b.createdAt),
    ...(b.completedAt ? { completedAt: iso(b.completedAt) } : {}),
  };
}
