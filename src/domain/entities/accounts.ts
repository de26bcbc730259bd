import type { AccountStatus } from '../catalog.js';

export interface AccountRow {
  id: string;
  name: string;
  status: AccountStatus;
  dailyQuota: number;
  statusChangedAt: Date;
  createdAt: Date;
}
