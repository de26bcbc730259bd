import type { MessageInitShape } from '@bufbuild/protobuf';
import type { AccountRow, AccountStats } from '../db/repos/accounts-repo.js';
import type { ApiKeyRow } from '../db/repos/api-keys-repo.js';
import type { CaughtMessageRow } from '../db/repos/caught-messages-repo.js';
import type { DomainRow } from '../db/repos/domains-repo.js';
import type { EmailRow, EmailSummaryRow, StoredAttachment } from '../db/repos/emails-repo.js';
import type { WebhookRow } from '../db/repos/webhooks-repo.js';
import type { AccountSchema, ApiKeySchema, CaughtMessageSchema, DomainSchema, WebhookSchema } from '../gen/mail/v1/admin_service_pb.js';
import type { BatchRow } from '../db/repos/batch-repo.js';
import type { ScheduledRow } from '../db/repos/scheduled-repo.js';
import type { BatchJobSchema, EmailSchema, EmailSummarySchema, ScheduledEmailSchema } from '../gen/mail/v1/types_pb.js';
import { dnsRecords } from '../services/domains-service.js';

/** Stored rows as the schema's messages: the one place that decides what a caller sees of a record. */

const iso = (d: Date) => d.toISOString();

export function presentEmail(email: EmailRow, attachments: StoredAttachment[]): MessageInitShape<typeof EmailSchema> {
  return {
    id: email.id,
    messageId: email.messageId,
    from: email.from,
    to: email.to,
    cc: email.cc,
    bcc: email.bcc,
    replyTo: email.replyTo,
    subject: email.subject,
    html: email.html,
    text: email.text,
    status: email.status,
    malStatus: 'healthy',
    createdAt: iso(email.createdAt),
    headers: email.headers,
    tags: email.tags,
    attachments: attachments.map((a) => ({ filename: a.filename, content: a.content.toString('base64'), contentType: a.contentType })),
    jobType: email.jobType,
    jobId: email.jobId,
  };
}

export function presentEmailSummary(e: EmailSummaryRow): MessageInitShape<typeof EmailSummarySchema> {
  return { id: e.id, from: e.from, to: e.to, subject: e.subject, status: e.status, createdAt: iso(e.createdAt) };
}

export function presentScheduled(s: ScheduledRow): MessageInitShape<typeof ScheduledEmailSchema> {
  return {
    id: s.id, from: s.from, to: s.to, subject: s.subject, scheduledAt: iso(s.scheduledAt), status: s.status,
    createdAt: iso(s.createdAt), attempts: s.attempts,
  };
}

export function presentBatch(b: BatchRow): MessageInitShape<typeof BatchJobSchema> {
  return {
    jobId: b.id, totalCount: b.totalCount, sentCount: b.sentCount, failedCount: b.failedCount, status: b.status,
    createdAt: iso(b.createdAt), ...(b.completedAt ? { completedAt: iso(b.completedAt) } : {}),
  };
}

export function presentAccount(a: AccountRow, stats?: AccountStats): MessageInitShape<typeof AccountSchema> {
  return {
    id: a.id, name: a.name, status: a.status, dailyQuota: a.dailyQuota, createdAt: iso(a.createdAt),
    ...(stats ? { sentToday: stats.sentToday, bounceRate: stats.bounceRate, complaintRate: stats.complaintRate } : {}),
  };
}

export function presentDomain(d: DomainRow): MessageInitShape<typeof DomainSchema> {
  return {
    id: d.id, name: d.name, verified: d.verifiedAt !== null, dnsRecords: dnsRecords(d),
    openTracking: d.openTracking, clickTracking: d.clickTracking, createdAt: iso(d.createdAt),
  };
}

export function presentApiKey(k: ApiKeyRow, extra: { key?: string; withUsage?: boolean } = {}): MessageInitShape<typeof ApiKeySchema> {
  const { requestCount, errorCount, emailSentCount } = k.usage;
  return {
    id: k.id, name: k.name, permission: k.permission, allowedDomains: k.allowedDomains, createdAt: iso(k.createdAt),
    ...(extra.key !== undefined ? { key: extra.key } : {}),
    ...(extra.withUsage
      ? { usage: { requestCount, emailSentCount, errorRate: requestCount === 0 ? 0 : errorCount / requestCount } }
      : {}),
  };
}

export function presentWebhook(w: WebhookRow, secret?: string): MessageInitShape<typeof WebhookSchema> {
  return { id: w.id, url: w.url, events: w.events, createdAt: iso(w.createdAt), ...(secret !== undefined ? { secret } : {}) };
}

export function presentCaught(m: CaughtMessageRow): MessageInitShape<typeof CaughtMessageSchema> {
  return {
    id: m.id, messageId: m.messageId, from: m.envelopeFrom, to: m.envelopeTo, subject: m.subject,
    receivedAt: iso(m.receivedAt), size: m.size, path: m.path,
  };
}
