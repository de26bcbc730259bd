import { fromJson, type JsonObject, type MessageInitShape } from '@bufbuild/protobuf';
import { ValueSchema } from '@bufbuild/protobuf/wkt';
import type { AccountRow } from '../domain/entities/accounts.js';
import type { ApiKeyRow } from '../domain/entities/api-keys.js';
import type { CaughtMessageRow } from '../domain/entities/caught-messages.js';
import type { DayCounts, EventRow } from '../domain/entities/events.js';
import type { SuppressionRow } from '../domain/entities/suppressions.js';
import type { WebhookDeliveryRow } from '../domain/entities/webhooks.js';
import type { WebhookRow } from '../domain/entities/webhooks.js';
import type {
  AccountSchema,
  ApiKeySchema,
  DomainSchema,
  WebhookDeliverySchema,
  WebhookSchema,
} from '../gen/mail/v1/account_pb.js';
import type {
  CaughtMessageSchema,
  DailyStatsSchema,
  EmailEventSchema,
  SuppressionSchema,
} from '../gen/mail/v1/admin_service_pb.js';
import type { AccountWithStats } from '../services/accounts-service.js';
import type { DomainView } from '../services/domains-service.js';
import { iso } from './presenters.js';
import { presentTopic } from './suppression-presenters.js';

/** Management API records as the schema's messages. */

export function presentAccount(a: AccountRow | AccountWithStats): MessageInitShape<typeof AccountSchema> {
  return {
    id: a.id,
    name: a.name,
    status: a.status,
    dailyQuota: a.dailyQuota,
    createdAt: iso(a.createdAt),
    // The unsubscribe page's branding, shown only when set.
    ...(a.brandName === null ? {} : { brandName: a.brandName }),
    ...(a.brandLogoUrl === null ? {} : { brandLogoUrl: a.brandLogoUrl }),
    ...('sentToday' in a
      ? {
          sentToday: a.sentToday,
          bounceRate: a.bounceRate,
          complaintRate: a.complaintRate,
          streams: a.streams,
          compliance: a.compliance,
        }
      : {}),
  };
}

export function presentDomain(d: DomainView): MessageInitShape<typeof DomainSchema> {
  return {
    id: d.id,
    name: d.name,
    verified: d.verifiedAt !== null,
    // Field by field: what is published, never more of the key than its public half.
    dnsRecords: d.dnsRecords.map((r) => ({
      type: r.type,
      name: r.name,
      value: r.value,
      zoneValue: r.zoneValue,
      purpose: r.purpose,
      status: r.status,
    })),
    openTracking: d.openTracking,
    clickTracking: d.clickTracking,
    createdAt: iso(d.createdAt),
    dnsCheckedAt: d.dnsCheckedAt ? iso(d.dnsCheckedAt) : '',
    dnsFailingSince: d.dnsFailingSince ? iso(d.dnsFailingSince) : '',
    dmarc: {
      published: d.dmarc.published,
      // A google.protobuf.Value, so that JSON shows an explicit null when no policy is published.
      policy: fromJson(ValueSchema, d.dmarc.policy),
      recordName: d.dmarc.recordName ?? '',
    },
  };
}

export function presentApiKey(
  k: ApiKeyRow,
  extra: { key?: string; withUsage?: boolean } = {},
): MessageInitShape<typeof ApiKeySchema> {
  const { requestCount, errorCount, emailSentCount, sentToday } = k.usage;
  return {
    id: k.id,
    name: k.name,
    permission: k.permission,
    allowedDomains: k.allowedDomains,
    createdAt: iso(k.createdAt),
    ...(extra.key !== undefined ? { key: extra.key } : {}),
    ...(extra.withUsage
      ? {
          usage: {
            requestCount,
            emailSentCount,
            errorRate: requestCount === 0 ? 0 : errorCount / requestCount,
            sentToday,
          },
          ...(k.lastUsedAt === null ? {} : { lastUsedAt: iso(k.lastUsedAt) }),
        }
      : {}),
    // The key's own limits, shown only where it has them (absent: the account's and the service's).
    ...(k.rateLimit === null ? {} : { rateLimit: k.rateLimit }),
    ...(k.dailyQuota === null ? {} : { dailyQuota: k.dailyQuota }),
    ...(k.expiresAt === null ? {} : { expiresAt: iso(k.expiresAt) }),
  };
}

export function presentWebhook(w: WebhookRow, secret?: string): MessageInitShape<typeof WebhookSchema> {
  const overlapping = w.previousSecretUntil !== null && w.previousSecretUntil > new Date();
  return {
    id: w.id,
    url: w.url,
    events: w.events,
    createdAt: iso(w.createdAt),
    ...(secret !== undefined ? { secret } : {}),
    ...(overlapping ? { previousSecretUntil: iso(w.previousSecretUntil!) } : {}),
    ...(w.disabledAt ? { disabledAt: iso(w.disabledAt), disabledReason: w.disabledReason ?? '' } : {}),
  };
}

export function presentCaught(m: CaughtMessageRow): MessageInitShape<typeof CaughtMessageSchema> {
  return {
    id: m.id,
    messageId: m.messageId,
    from: m.envelopeFrom,
    to: m.envelopeTo,
    subject: m.subject,
    receivedAt: iso(m.receivedAt),
    size: m.size,
    path: m.path,
  };
}

export function presentEvent(e: EventRow): MessageInitShape<typeof EmailEventSchema> {
  return { id: e.id, type: e.type, createdAt: iso(e.createdAt), data: e.data as JsonObject };
}

export function presentWebhookDelivery(d: WebhookDeliveryRow): MessageInitShape<typeof WebhookDeliverySchema> {
  return {
    id: d.id,
    webhookId: d.webhookId,
    eventId: d.eventId,
    eventType: d.eventType,
    ...(d.emailId !== null ? { emailId: d.emailId } : {}),
    ...(d.inboundId !== null ? { inboundId: d.inboundId } : {}),
    status: d.status,
    createdAt: iso(d.createdAt),
    ...(d.completedAt ? { completedAt: iso(d.completedAt) } : {}),
    ...(d.discardReason ? { discardReason: d.discardReason } : {}),
    attempts: d.attempts.map((a) => ({
      attempt: a.attempt,
      startedAt: iso(a.startedAt),
      statusCode: a.statusCode,
      latencyMs: a.latencyMs,
      responseExcerpt: a.responseExcerpt,
      error: a.error,
    })),
  };
}

export function presentDay(d: DayCounts): MessageInitShape<typeof DailyStatsSchema> {
  return { ...d };
}

export function presentSuppression(s: SuppressionRow): MessageInitShape<typeof SuppressionSchema> {
  return {
    id: s.id,
    emailAddress: s.address,
    reason: s.reason,
    ...(s.emailId !== '' ? { emailId: s.emailId } : {}),
    createdAt: iso(s.createdAt),
    scope: s.scope,
    topic: presentTopic(s.topic),
  };
}
