/** A broadcast email as its unsubscribe page and its one-click unsubscribe see it. */
export interface UnsubscribeTarget {
  emailId: string;
  accountId: string;
  /** The email's one recipient, as it was written in `to`. */
  recipient: string;
  /** The email's topic; null when it had none (an unsubscribe then covers every broadcast topic). */
  topic: string | null;
  /** Who the page says the mail is from: the account's brand name, else its name. */
  brandName: string;
  /** An https URL of the account's logo, or null. */
  brandLogoUrl: string | null;
}

/**
 * What became of an unsubscribe: `recorded` (the suppression is in place and the email's `unsubscribe` event
 * written now), `repeated` (the suppression is in place, the event was recorded before), `unknown_email` (no
 * broadcast email has this id any more, or its recipient was erased: nothing written).
 */
export type UnsubscribeOutcome = 'recorded' | 'repeated' | 'unknown_email';
