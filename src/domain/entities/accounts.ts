import type { AccountStatus } from '../catalog.js';

export interface AccountRow {
  id: string;
  name: string;
  status: AccountStatus;
  dailyQuota: number;
  statusChangedAt: Date;
  createdAt: Date;
  /** What the unsubscribe page shows for the account instead of its name (branding.ts); null: its name. */
  brandName: string | null;
  /** An https URL of the logo the unsubscribe page shows; null: none. */
  brandLogoUrl: string | null;
}
