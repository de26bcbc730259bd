import type { Account, ApiKey, Domain, Webhook } from '../../src/gen/mail/v1/account_pb.js';
import type { BatchJob, Email, ScheduledEmail } from '../../src/gen/mail/v1/types_pb.js';
import { fields, fieldsOf, list, pairs, percent, table, yesNo } from './format.js';

// Human renderings of the API's records, shared by the commands that answer them.

export function showEmail(e: Email): string {
  const parts = [
    fields([
      ['id', e.id],
      ['status', e.status],
      ['message_id', e.messageId || '(not sent yet)'],
      ['from', e.from],
      ['to', list(e.to)],
      ['cc', e.cc.length ? list(e.cc) : undefined],
      ['bcc', e.bcc.length ? list(e.bcc) : undefined],
      ['reply_to', e.replyTo.length ? list(e.replyTo) : undefined],
      ['subject', e.subject],
      ['stream', e.topic ? `${e.stream} (topic ${e.topic})` : e.stream],
      [
        'template',
        e.template
          ? `${e.template.id} version ${e.template.version}${e.template.locale ? ` (${e.template.locale})` : ''}`
          : undefined,
      ],
      ['created_at', e.createdAt],
      ['job', e.jobType === 'direct' ? 'direct' : `${e.jobType} ${e.jobId}`],
      ['headers', Object.keys(e.headers).length ? pairs(e.headers) : undefined],
      ['tags', Object.keys(e.tags).length ? pairs(e.tags) : undefined],
      ['html', e.html ? `${Buffer.byteLength(e.html)} bytes` : undefined],
      ['text', e.text ? `${Buffer.byteLength(e.text)} bytes` : undefined],
    ]),
  ];
  if (e.attachments.length) {
    parts.push(
      '',
      table(
        ['ATTACHMENT', 'TYPE', 'SIZE'],
        e.attachments.map((a) => [a.filename, a.contentType, `${Buffer.from(a.content, 'base64').length} bytes`]),
      ),
    );
  }
  if (e.text) parts.push('', '--- text ---', e.text.trimEnd());
  return parts.join('\n');
}

export function showScheduled(s: ScheduledEmail): string {
  return fieldsOf(s, ['id', 'status', 'scheduledAt', 'from', ['to', list(s.to)], 'subject', 'attempts', 'createdAt']);
}

export function showBatchJob(j: BatchJob): string {
  return fieldsOf(j, ['jobId', 'status', 'totalCount', 'sentCount', 'failedCount', 'createdAt', 'completedAt']);
}

export const batchJobRows = (jobs: BatchJob[]): string[][] =>
  jobs.map((j) => [
    j.jobId,
    j.status,
    String(j.totalCount),
    String(j.sentCount),
    String(j.failedCount),
    j.createdAt,
    j.completedAt ?? '',
  ]);

export const BATCH_JOB_HEADERS = ['JOB ID', 'STATUS', 'TOTAL', 'SENT', 'FAILED', 'CREATED', 'COMPLETED'];

export function showAccount(a: Account): string {
  const rate = (r: number | undefined) => (r === undefined ? undefined : percent(r));
  return fieldsOf(a, [
    'id',
    'name',
    'status',
    'dailyQuota',
    'sentToday',
    ['bounce_rate', rate(a.bounceRate)],
    ['complaint_rate', rate(a.complaintRate)],
    'brandName',
    'brandLogoUrl',
    'createdAt',
  ]);
}

export function showDomain(d: Domain): string {
  const parts = [
    fieldsOf(d, [
      'id',
      'name',
      ['verified', yesNo(d.verified)],
      ['open_tracking', yesNo(d.openTracking)],
      ['click_tracking', yesNo(d.clickTracking)],
      'createdAt',
      ['dns_checked_at', d.dnsCheckedAt || '(never)'],
      ['dns_failing_since', d.dnsFailingSince ? `${d.dnsFailingSince} (records below are failing)` : undefined],
    ]),
  ];
  if (d.dnsRecords.length) {
    parts.push(
      '',
      table(
        ['PURPOSE', 'STATUS', 'TYPE', 'NAME', 'VALUE'],
        d.dnsRecords.map((r) => [r.purpose, r.status, r.type, r.name, r.value]),
      ),
    );
    // One DNS character string holds 255 characters: a longer TXT value (a DKIM key's) is published as several,
    // which zone files and most DNS providers take as quoted strings side by side (the API's zone_value).
    const long = d.dnsRecords.filter((r) => r.type === 'TXT' && r.value.length > 255);
    if (long.length) {
      parts.push(
        '',
        'TXT values over 255 characters, as quoted 255-character strings for zone files and DNS providers that ask for them:',
        ...long.map((r) => `${r.name}. IN TXT ${r.zoneValue}`),
      );
    }
  }
  return parts.join('\n');
}

export function showApiKey(k: ApiKey): string {
  return fieldsOf(k, [
    'id',
    'name',
    'permission',
    ['allowed_domains', k.allowedDomains.length ? list(k.allowedDomains) : '(any verified domain)'],
    // The key's own limits, where it has them.
    ['rate_limit', k.rateLimit === undefined ? undefined : `${k.rateLimit} requests per second`],
    ['daily_quota', k.dailyQuota === undefined ? undefined : `${k.dailyQuota} emails per UTC day`],
    ['expires_at', k.expiresAt],
    'createdAt',
  ]);
}

export function showWebhook(w: Webhook): string {
  return fieldsOf(w, [
    'id',
    'url',
    ['events', list(w.events)],
    'createdAt',
    [
      'previous_secret_until',
      w.previousSecretUntil ? `${w.previousSecretUntil} (the previous secret signs too until then)` : undefined,
    ],
    [
      'disabled',
      w.disabledAt ? `since ${w.disabledAt}: ${w.disabledReason ?? ''} (mailer webhooks enable ${w.id})` : undefined,
    ],
  ]);
}

/** A webhook's state in one word or two, for tables. */
export const webhookState = (w: Webhook): string => (w.disabledAt ? `disabled since ${w.disabledAt}` : 'active');
