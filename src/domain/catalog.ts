import { invalid } from '../errors.js';

/**
 * The spec's vocabularies, once. Wire values are these lowercase strings. The proto's field comments and
 * the migrations' CHECK constraints repeat them; test/integration/status-vocabularies.test.ts holds the
 * three equal.
 */

export const EMAIL_STATUSES = ['pending', 'sent', 'delivered', 'bounced', 'complained'] as const;
export type EmailStatus = (typeof EMAIL_STATUSES)[number];

export const JOB_TYPES = ['direct', 'scheduled', 'batch'] as const;
export type JobType = (typeof JOB_TYPES)[number];

/** Which mail an email is (CONTRACT.md, "Streams"): broadcast mail gets one-click unsubscribe and its own rates. */
export const STREAMS = ['transactional', 'broadcast'] as const;
export type Stream = (typeof STREAMS)[number];

/** Stored states of a scheduled email; `scheduled` is the filter name for those still waiting (shown `enqueued`). */
export const SCHEDULED_STATUSES = ['enqueued', 'sent', 'cancelled'] as const;
export type ScheduledStatus = (typeof SCHEDULED_STATUSES)[number];
export const SCHEDULED_FILTERS = ['scheduled', 'sent', 'cancelled'] as const;

export const BATCH_STATUSES = ['pending', 'processing', 'completed', 'failed'] as const;
export type BatchStatus = (typeof BATCH_STATUSES)[number];

/**
 * `unsubscribe`: the recipient of a broadcast email unsubscribed through its one-click URL or mailto address.
 * `inbound`: mail arrived for one of the account's inbound routes (about no email we sent). `reply`: an inbound
 * message answered one of the account's emails (recorded on that email).
 */
export const EVENT_TYPES = [
  'send',
  'delivery',
  'bounce',
  'complaint',
  'reject',
  'open',
  'click',
  'unsubscribe',
  'inbound',
  'reply',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

export const ACCOUNT_STATUSES = ['healthy', 'review', 'paused', 'banned'] as const;
export type AccountStatus = (typeof ACCOUNT_STATUSES)[number];

/** Why an address is suppressed: a hard bounce, a complaint, a one-click unsubscribe, or added by the account. */
export const SUPPRESSION_REASONS = ['bounce', 'complaint', 'unsubscribe', 'manual'] as const;
/** What a suppression stops: every email to the address, or its broadcast emails (of one topic, or all). */
export const SUPPRESSION_SCOPES = ['all', 'broadcast'] as const;

/** A domain's DKIM key: published and checked before it signs (pending), signing (active), replaced (retired). */
export const DKIM_KEY_STATUSES = ['pending', 'active', 'retired'] as const;
export type DkimKeyStatus = (typeof DKIM_KEY_STATUSES)[number];

export const PERMISSIONS = ['read_only', 'send_only', 'all'] as const;
export type Permission = (typeof PERMISSIONS)[number];

/** What GET /stats groups recipients by (CONTRACT.md "Stats and timelines"). */
export const STATS_GROUPS = ['day', 'domain', 'recipient_domain', 'tag', 'stream'] as const;
export type StatsGroup = (typeof STATS_GROUPS)[number];
/** The rollup's dimensions (stats_rollup.dim): every group but `day`, which sums the `stream` rows. */
export const STATS_DIMENSIONS = ['stream', 'domain', 'recipient_domain', 'tag'] as const;
export type StatsDimension = (typeof STATS_DIMENSIONS)[number];

export function isOneOf<T extends string>(values: readonly T[], value: string): value is T {
  return (values as readonly string[]).includes(value);
}

/** A list's filter: empty for none, else one of `values`; anything else is a 400 naming the field and the values. */
export function filterOf<T extends string>(field: string, values: readonly T[], raw: string): T | undefined {
  if (raw === '') return undefined;
  if (!isOneOf(values, raw)) throw invalid(`${field} must be one of ${values.join(', ')}; got "${raw}"`);
  return raw;
}
