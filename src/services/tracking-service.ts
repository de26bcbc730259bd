import type { TrackingHit, TrackingRepo } from '../db/repos/tracking-repo.js';
import { event } from '../domain/events.js';
import { newId } from '../ids.js';
import type { LinkTracker } from '../mail/tracking.js';

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

  const record = async (hit: TrackingHit): Promise<void> => {
    await hits.hit(hit, rules).catch(onError);
  };
  const seen = (client: TrackingClient, at: Date) => ({
    timestamp: at.toISOString(),
    ip_address: client.ip,
    user_agent: client.userAgent.slice(0, MAX_USER_AGENT),
  });

  return {
    /** Records an `open` of the pixel's email; resolves when recorded or given up, never rejects. */
    async open(token: string, client: TrackingClient): Promise<void> {
      const emailId = tokens.verifyOpen(token);
      if (emailId === undefined) return;
      const at = now();
      await record({ emailId, event: event(newId('event'), 'open', at, seen(client, at)) });
    },

    /** The URL to redirect to, after recording a `click` with the link; undefined for a token not signed here. */
    async click(token: string, client: TrackingClient): Promise<string | undefined> {
      const target = tokens.verifyClick(token);
      if (target === undefined) return undefined;
      const at = now();
      await record({ emailId: target.emailId, link: target.link, event: event(newId('event'), 'click', at, { ...seen(client, at), link: target.link }) });
      return target.redirectTo;
    },

    /** Where a tracked link leads, without counting a click (a HEAD request, which no reader makes). */
    clickTarget(token: string): string | undefined {
      return tokens.verifyClick(token)?.redirectTo;
    },
  };
}
export type TrackingService = ReturnType<typeof createTrackingService>;
