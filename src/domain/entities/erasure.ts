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
  /** Emails still being delivered, and scheduled emails still enqueued, left as they are (erase again once they are done). */
  skippedPending: number;
}

/** A chunk of a table read in id order: where the next starts, and the ids of the rows that matched. */
export interface ScannedChunk {
  last: string | undefined;
  hits: string[];
}
