export interface SuppressionRow {
  id: string;
  accountId: string;
  address: string;
  reason: 'bounce' | 'complaint';
  emailId: string;
  createdAt: Date;
}
