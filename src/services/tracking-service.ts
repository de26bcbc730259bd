import type { EventsRepo } from '../db/repos/events-repo.js';
import { event, type NewEvent } from '../domain/events.js';
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
 * Opens and clicks: mail clients fetch these URLs without any credentials, so a token this service did not
 * sign, or one for an email that no longer exists, is ignored without a word (a click on a forged token is
 * not redirected). Recording is best effort: a failure is reported to `onError` and never costs the
 * recipient the image or the redirect.
 */
export function createTrackingService(deps: {
  events: Pick<EventsRepo, 'record'>;
  tokens: Pick<LinkTracker, 'verifyOpen' | 'verifyClick'>;
  now: () => Date;
  onError: (err: unknown) => void;
}) {
  const { events, tokens, now, onError } = deps;

  const record = async (emailId: string, ev: NewEvent): Promise<void> => {
    await events.record(emailId, [ev]).catch(onError);
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
      await record(emailId, event(newId('event'), 'open', at, seen(client, at)));
    },

    /** The URL to redirect to, after recording a `click` with the link; undefined for a token not signed here. */
    async click(token: string, client: TrackingClient): Promise<string | undefined> {
      const target = tokens.verifyClick(token);
      if (target === undefined) return undefined;
      const at = now();
      await record(target.emailId, event(newId('event'), 'click', at, { ...seen(client, at), link: target.link }));
      return target.redirectTo;
    },
  };
}
export type TrackingService = ReturnType<typeof createTrackingService>;
