import type { BatchStatus } from '../catalog.js';

export interface BatchRow {
  id: string;
  accountId: string;
  status: BatchStatus;
  totalCount: number;
  sentCount: number;
  failedCount: number;
  createdAt: Date;
  completedAt: Date | null;
}
