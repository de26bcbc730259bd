import type { DkimSigningKey } from '../dkim/dkim-keyring.js';
import type { BuiltMessage } from '../transport/send-built.js';

/** What besides the email's stored content a built message depends on: a send made under other terms builds again. */
export interface BuildTerms {
  openTracking: boolean;
  clickTracking: boolean;
  dkim: DkimSigningKey | undefined;
}

export interface PrebuiltMessages {
  /** Keeps `message`, built for email `emailId` under `terms`; false (and nothing kept) when over the byte budget. */
  put(emailId: string, message: BuiltMessage, terms: BuildTerms): boolean;
  /** The message kept for `emailId` if it was built under the same terms; either way it is no longer kept. */
  take(emailId: string, terms: BuildTerms): BuiltMessage | undefined;
  /** Forgets the messages of these emails (built for scheduled emails that were then not fired). */
  drop(emailIds: Iterable<string>): void;
}

const sameKey = (a: DkimSigningKey | undefined, b: DkimSigningKey | undefined) =>
  a === b ||
  (a !== undefined &&
    b !== undefined &&
    a.domainName === b.domainName &&
    a.keySelector === b.keySelector &&
    a.privateKey === b.privateKey);

const sameTerms = (a: BuildTerms, b: BuildTerms) =>
  a.openTracking === b.openTracking && a.clickTracking === b.clickTracking && sameKey(a.dkim, b.dkim);

/**
 * Messages built and signed ahead of their send, in this process's memory: scheduled emails are built in
 * the seconds before they fall due (job-activities.ts), so that at their time only the SMTP hand-over and
 * the bookkeeping are left. Nothing here is needed for correctness: a send that finds no message, or one
 * built under other terms (tracking switched, the DKIM key rotated), builds it as usual. Bounded by bytes, and
 * each message is forgotten once taken, dropped, or `ttlMs` after it was kept.
 */
export function createPrebuiltMessages(options: {
  maxBytes: number;
  ttlMs: number;
  now?: () => number;
}): PrebuiltMessages {
  const now = options.now ?? Date.now;
  const kept = new Map<string, { message: BuiltMessage; terms: BuildTerms; until: number }>();
  let bytes = 0;

  const forget = (emailId: string) => {
    const entry = kept.get(emailId);
    if (!entry) return undefined;
    kept.delete(emailId);
    bytes -= entry.message.raw.length;
    return entry;
  };
  // Map order is insertion order, and every entry lives as long: the expired ones are at the front.
  const expire = () => {
    const t = now();
    for (const [emailId, entry] of kept) {
      if (entry.until > t) break;
      forget(emailId);
    }
  };

  return {
    put(emailId, message, terms) {
      expire();
      if (bytes + message.raw.length > options.maxBytes) return false;
      forget(emailId);
      kept.set(emailId, { message, terms, until: now() + options.ttlMs });
      bytes += message.raw.length;
      return true;
    },
    take(emailId, terms) {
      expire();
      const entry = forget(emailId);
      return entry && sameTerms(entry.terms, terms) ? entry.message : undefined;
    },
    drop(emailIds) {
      for (const emailId of emailIds) forget(emailId);
    },
  };
}
