/** What an erasure removed or rewrote, by kind (the management API answers it). */
export interface ErasureCounts {
  emails: number;
  scheduledEmails: number;
  attachments: number;
  events: number;
  webhookAttempts: number;
  trackingWindows: number;
  caughtMessages: number;
  suppressions: number;
  idempotencyKeys: number;
  /**
   * Emails still being delivered, scheduled emails still enqueued and inbound emails with a webhook delivery still
   * pending, left as they are (erase again once they are done).
   */
  skippedPending: number;
  /** Inbound emails from or to the address, deleted whole (with their bytes, `inbound` events and deliveries). */
  inboundEmails: number;
}

/** A chunk of a table read in id order: where the next starts, and the ids of the rows that matched. */
export interface ScannedChunk {
  last: string | undefined;
  hits: string[];
}
