/** Why an address is suppressed: a hard bounce, a complaint, a one-click unsubscribe, or the account's own choice. */
export type SuppressionReason = 'bounce' | 'complaint' | 'unsubscribe' | 'manual';

/** What a suppression stops: every email to the address (`all`), or its broadcast emails only. */
export type SuppressionScope = 'all' | 'broadcast';

/** What a suppression covers: its scope, and for `broadcast` a topic ('' when it is for every topic). */
export interface SuppressionRule {
  scope: SuppressionScope;
  /** '' when none (the column is NOT NULL so that one unique constraint covers it: migration 25). */
  topic: string;
}

export interface SuppressionRow extends SuppressionRule {
  id: string;
  accountId: string;
  /** The address in its key form (address.ts addressKey), or `sha256:<hex>` once erased (address-digest.ts). */
  address: string;
  reason: SuppressionReason;
  /** The email whose bounce, complaint or unsubscribe put it there; '' when added by hand or imported. */
  emailId: string;
  createdAt: Date;
}

/** The filters of an account's suppression list (each absent: any). */
export interface SuppressionFilter {
  /** An address key (exact match), or part of one (contains, case-insensitive). */
  email?: { exact: string } | { contains: string };
  reason?: SuppressionReason;
  scope?: SuppressionScope;
  /** '' selects the suppressions for no particular topic. */
  topic?: string;
}

/** One suppression to add: an address key and what it covers. */
export interface NewSuppressionEntry extends SuppressionRule {
  address: string;
}
