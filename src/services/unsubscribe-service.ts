import type { UnsubscribesRepo } from '../db/index.js';
import type { UnsubscribeOutcome, UnsubscribeTarget } from '../domain/entities/unsubscribes.js';
import type { UnsubscribeTokens } from '../delivery/message/unsubscribe-token.js';
import { AppError, unavailable } from '../errors.js';
import { newId } from '../ids.js';

/** Unsubscribe statements (and page reads) running at once in a process: a flood keeps the rest of the pool (40) free. */
const MAX_CONCURRENT = 4;
/** Emails waiting for a statement before more are refused (503, retry): bounded memory, whatever arrives. */
const MAX_WAITING = 1000;

/** What the unsubscribe page and the one-click POST answer about an email. */
export interface Unsubscribed {
  outcome: Exclude<UnsubscribeOutcome, 'unknown_email'>;
  target: UnsubscribeTarget;
}

const notValid = () =>
  new AppError(
    'not_found',
    'This unsubscribe link is not valid: it was not issued by this server, was altered, or its email no longer exists.',
  );

/**
 * One-click unsubscribe (RFC 8058; CONTRACT.md, "Streams, one-click unsubscribe and suppressions"), for the
 * URL (http/tracking-routes.ts) and the mailto address (inbound/report-listener.ts) alike. The token is the only
 * credential: it is checked (an HMAC, no I/O) before anything else, so a forged or altered one costs nothing and
 * answers 404. The work a valid one can cause is bounded as tracking hits are: requests for one email that
 * arrive while its statement waits or runs share that statement's answer, at most MAX_CONCURRENT statements run
 * at once, and beyond MAX_WAITING emails waiting a request is refused with 503 (retry later) rather than queued.
 */
export function createUnsubscribeService(deps: {
  unsubscribes: Pick<UnsubscribesRepo, 'target' | 'record'>;
  tokens: Pick<UnsubscribeTokens, 'verify'>;
  now: () => Date;
}) {
  const { unsubscribes, tokens, now } = deps;
  let running = 0;
  const ready: (() => void)[] = [];
  /** Work per email (and kind) waiting or running: a request for the same joins it. */
  const pending = new Map<string, Promise<unknown>>();

  const slot = async <T>(work: () => Promise<T>): Promise<T> => {
    if (running >= MAX_CONCURRENT) await new Promise<void>((resolve) => ready.push(resolve));
    running++;
    try {
      return await work();
    } finally {
      running--;
      ready.shift()?.();
    }
  };

  const shared = <T>(key: string, work: () => Promise<T>): Promise<T> => {
    const joined = pending.get(key);
    if (joined) return joined as Promise<T>;
    if (pending.size >= MAX_WAITING) throw unavailable('Too many unsubscribe requests are waiting; retry in a moment');
    const started = slot(work).finally(() => pending.delete(key));
    pending.set(key, started);
    return started;
  };

  const emailOf = (token: string): string => {
    const emailId = tokens.verify(token);
    if (emailId === undefined) throw notValid();
    return emailId;
  };

  /** Unsubscribes the recipient of broadcast email `emailId` (its token already checked). */
  const unsubscribeEmail = async (emailId: string): Promise<Unsubscribed> => {
    const { outcome, target } = await shared(`record ${emailId}`, () =>
      unsubscribes.record(emailId, { suppressionId: newId('suppression'), event: { id: newId('event'), at: now() } }),
    );
    if (outcome === 'unknown_email' || !target) throw notValid();
    return { outcome, target };
  };

  return {
    /** What the page of `token` shows; never writes anything (link scanners GET every URL in a message). */
    async page(token: string): Promise<UnsubscribeTarget> {
      const emailId = emailOf(token);
      const target = await shared(`page ${emailId}`, () => unsubscribes.target(emailId));
      if (!target) throw notValid();
      return target;
    },

    /** The one-click unsubscribe of `token`: idempotent, the event recorded once. */
    async unsubscribe(token: string): Promise<Unsubscribed> {
      return unsubscribeEmail(emailOf(token));
    },

    unsubscribeEmail,
  };
}
export type UnsubscribeService = ReturnType<typeof createUnsubscribeService>;
