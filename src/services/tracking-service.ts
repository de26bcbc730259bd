import type { TrackingHit } from '../domain/entities/tracking.js';
import type { TrackingRepo } from '../db/index.js';
import { event } from '../domain/events.js';
import { newId } from '../ids.js';
import type { LinkTracker } from '../delivery/message/tracking.js';
import { createHitBatcher } from './hit-batcher.js';

/** Who fetched a pixel or followed a link, as the HTTP request shows it. */
export interface TrackingClient {
  ip: string;
  userAgent: string;
}

/** A User-Agent is the client's to choose: stored up to this many characters. */
const MAX_USER_AGENT = 512;

/**
 * Events (and so webhook POSTs) hits may make per email, ever; later hits are only counted. The windows
 * alone would let one email make an event per tracked link (up to 1000) every window: the cap bounds what
 * one sent email can cost, whatever replays it, while a real reader, who opens a message a few times and
 * clicks a few links, stays far below it. Sending costs quota, so events from tracking are bounded by it.
 */
export const MAX_TRACKING_EVENTS_PER_EMAIL = 100;
/** Tracking statements running at once in a process: a flood of hits keeps the rest of the pool (40) free. */
const TRACKING_WRITERS = 8;
/** Targets (pixel or link of an email) waiting to be written at once before hits are dropped. */
const MAX_WAITING_TARGETS = 10_000;
/**
 * How long a hit waits for its write before the client gets its image or redirect anyway: long enough that
 * a hit is recorded by the time it is answered on a quiet server, short enough that a flood never holds
 * clients (and their sockets) for long.
 */
const RECORD_WAIT_MS = 500;

/**
 * Opens and clicks: mail clients fetch these URLs without any credentials, so a token this service did not
 * sign, or one for an email that no longer exists, is ignored without a word (a click on a forged token is
 * not redirected). Recording is best effort: a failure is reported to `onError` and never costs the
 * recipient the image or the redirect.
 *
 * Every hit is counted; only the first hit of the pixel, or of one link, per `windowSeconds` records an
 * event, and no more than MAX_TRACKING_EVENTS_PER_EMAIL per email (decided in the database, see
 * tracking-repo.ts), so replaying a URL cannot flood the timeline or the account's webhooks.
 */
export function createTrackingService(deps: {
  hits: Pick<TrackingRepo, 'hit'>;
  tokens: Pick<LinkTracker, 'verifyOpen' | 'verifyClick'>;
  now: () => Date;
  windowSeconds: number;
  onError: (err: unknown) => void;
}) {
  const { hits, tokens, now, onError } = deps;
  const rules = { windowSeconds: deps.windowSeconds, maxEventsPerEmail: MAX_TRACKING_EVENTS_PER_EMAIL };

  const batcher = createHitBatcher<TrackingHit>({
    write: (hit, count) => hits.hit(hit, rules, count),
    maxConcurrent: TRACKING_WRITERS,
    maxWaitingTargets: MAX_WAITING_TARGETS,
    onError,
  });
  // Hits of one target are batched together: the email, the kind, and the link (after the newline, which no
  // email id holds).
  const record = (hit: TrackingHit): Promise<void> =>
    within(RECORD_WAIT_MS, batcher.add(`${hit.emailId}\n${hit.event.type}\n${hit.link ?? ''}`, hit));
  const seen = (client: TrackingClient, at: Date) => ({
    timestamp: at.toISOString(),
    ip_address: client.ip,
    user_agent: client.userAgent.slice(0, MAX_USER_AGENT),
  });

  return {
    /** Counts an `open` of the pixel's email; resolves when written, given up or RECORD_WAIT_MS passed, never rejects. */
    async open(token: string, client: TrackingClient): Promise<void> {
      const emailId = tokens.verifyOpen(token);
      if (emailId === undefined) return;
      const at = now();
      await record({ emailId, event: event(newId('event'), 'open', at, seen(client, at)) });
    },

    /** The URL to redirect to, after counting a `click` of the link (as `open`); undefined for a token not signed here. */
    async click(token: string, client: TrackingClient): Promise<string | undefined> {
      const target = tokens.verifyClick(token);
      if (target === undefined) return undefined;
      const at = now();
      await record({
        emailId: target.emailId,
        link: target.link,
        event: event(newId('event'), 'click', at, { ...seen(client, at), link: target.link }),
      });
      return target.redirectTo;
    },

    /** Where a tracked link leads, without counting a click (a HEAD request, which no reader makes). */
    clickTarget(token: string): string | undefined {
      return tokens.verifyClick(token)?.redirectTo;
    },
  };
}
export type TrackingService = ReturnType<typeof createTrackingService>;

/** Waits for `work` (which never rejects), but no longer than `ms`. */
function within(ms: number, work: Promise<void>): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    void work.then(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}
