import type { StoredStatuses } from '../dns-records.js';

export interface DomainRow {
  id: string;
  accountId: string;
  name: string;
  verificationToken: string;
  verifiedAt: Date | null;
  openTracking: boolean;
  clickTracking: boolean;
  createdAt: Date;
  /** The last DNS check of its records (null: never checked), and each record's status then. */
  dnsCheckedAt: Date | null;
  dnsStatuses: StoredStatuses;
  /** Since when a verified domain's required records have been failing; null while they are fine. */
  dnsFailingSince: Date | null;
}

/** The outcome of a DNS check, as stored. */
export interface DnsCheckState {
  checkedAt: Date;
  statuses: StoredStatuses;
  failingSince: Date | null;
}
