import type { AccountStatus, Permission } from '../catalog.js';

export interface ApiKeyRow {
  id: string;
  accountId: string;
  name: string;
  permission: Permission;
  allowedDomains: string[];
  keyPrefix: string;
  createdAt: Date;
  usage: { requestCount: number; errorCount: number; emailSentCount: number };
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
}

export interface UsageDelta {
  keyId: string;
  requests: number;
  errors: number;
  emailsSent: number;
}
