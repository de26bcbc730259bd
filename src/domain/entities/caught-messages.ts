export interface CaughtMessageRow {
  id: string;
  messageId: string;
  envelopeFrom: string;
  envelopeTo: string[];
  subject: string;
  size: number;
  path: string;
  receivedAt: Date;
}
