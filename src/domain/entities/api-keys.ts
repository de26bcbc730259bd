import type { AccountStatus, Permission } from '../catalog.js';

export interface ApiKeyRow {
  id: string;
  accountId: string;
  name: string;
  permission: Permission;
  allowedDomains: string[];
  keyPrefix: string;
  createdAt: Date;
  /** The key's own limits (null: the account's, and MAILER_RATE_LIMIT): requests per second, emails per UTC day. */
  rateLimit: number | null;
  dailyQuota: number | null;
  /** From then on the key is refused (null: never). */
  expiresAt: Date | null;
  lastUsedAt: Date | null;
  /** sentToday: today's (UTC) emails as the key's daily_quota counts them; 0 for a key without one (not counted). */
  usage: { requestCount: number; errorCount: number; emailSentCount: number; sentToday: number };
}

/** What a request authenticated with a key may do, read fresh on every request (no cache to invalidate). */
export interface KeyPrincipalRow {
  keyId: string;
  keyHash: Buffer;
  accountId: string;
  permission: Permission;
  allowedDomains: string[];
  accountStatus: AccountStatus;
  dailyQuota: number;
  /** The key's own limits and expiry (null: none). */
  rateLimit: number | null;
  keyDailyQuota: number | null;
  expiresAt: Date | null;
  /** Of everything above a send is judged by (migration 0038): what the statement storing it confirms. */
  fingerprint: string;
}

export interface UsageDelta {
  keyId: string;
  requests: number;
  errors: number;
  emailsSent: number;
}
