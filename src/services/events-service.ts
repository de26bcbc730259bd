import type { EventFeedRepo } from '../db/index.js';
import type { FeedEvent } from '../domain/entities/events.js';
import { EVENT_TYPES, filterOf } from '../domain/catalog.js';
import { decodeCursor, encodeCursor } from '../domain/event-cursor.js';
import { assertAllowed, permits } from '../domain/permissions.js';
import { invalid, notFound } from '../errors.js';
import type { Principal } from './auth-service.js';

/** Events per page of GET /events: 0 or absent is the default. */
export const EVENTS_PAGE = { default: 100, max: 1000 } as const;

export interface ListEventsQuery {
  /** '' (the start) or the next_cursor of an earlier answer. */
  after: string;
  limit: number;
  /** '' for every type. */
  type: string;
  /** '' for every email's; else only this email's (em_...), a 404 when the account has no such email. */
  emailId: string;
}

export interface EventsPage {
  events: FeedEvent[];
  /**
   * What to pass as `after` next: the last event's position, or the given cursor when there was none, so
   * a client polling with it forever reads each event once.
   */
  nextCursor: string;
}

/** The account's event feed (GET /events): what a webhook receiver that was down reads to catch up. */
export function createEventsService(deps: { feed: Pick<EventFeedRepo, 'after' | 'ofEmail' | 'hasEmail'> }) {
  return {
    async list(principal: Principal, q: ListEventsQuery): Promise<EventsPage> {
      // Any key may read its own account's events of emails: they tell no more than GET /emails/:id does.
      assertAllowed(principal.permission, principal.accountStatus, 'read');
      if (q.limit < 0 || q.limit > EVENTS_PAGE.max)
        throw invalid(`limit must be from 1 to ${EVENTS_PAGE.max}, got ${q.limit}`);
      const type = filterOf('type', EVENT_TYPES, q.type);
      // An `inbound` event carries the inbound email: a key that may not read inbound mail (send_only) does not
      // read it here either; asked for by type, a 403 as GET /inbound/emails answers, else left out of the feed.
      const withInbound = permits(principal.permission, 'read_inbound');
      if (type === 'inbound') assertAllowed(principal.permission, principal.accountStatus, 'read_inbound');
      const position = decodeCursor(q.after);
      const events = await deps.feed.after(
        principal.accountId,
        position,
        type,
        q.limit === 0 ? EVENTS_PAGE.default : q.limit,
        withInbound,
        q.emailId === '' ? undefined : q.emailId,
      );
      // An email the account does not have is a 404, as GET /emails/:id answers (another account's included:
      // the same words, so nothing tells the two apart); asked only when the page is empty, the one case in
      // which the answer alone does not show that the email is the account's.
      if (events.length === 0 && q.emailId !== '' && !(await deps.feed.hasEmail(principal.accountId, q.emailId)))
        throw notFound('email', q.emailId);
      const last = events.at(-1);
      return { events, nextCursor: last ? encodeCursor(last.position) : q.after };
    },

    /** GET /emails/:id/events: the email's events, oldest first; another account's email is a 404 like none. */
    async ofEmail(principal: Principal, emailId: string): Promise<FeedEvent[]> {
      assertAllowed(principal.permission, principal.accountStatus, 'read');
      const events = await deps.feed.ofEmail(principal.accountId, emailId);
      if (events === undefined) throw notFound('email', emailId);
      return events;
    },
  };
}
export type EventsService = ReturnType<typeof createEventsService>;
