import type { AccountsRepo } from '../db/index.js';
import type { EmailRow, StoredAttachment } from '../domain/entities/emails.js';
import type { DayCounts, EventRow } from '../domain/entities/events.js';
import type { EventsRepo } from '../db/index.js';
import type { OwnersRepo } from '../db/index.js';
import type { SuppressionsRepo } from '../db/index.js';
import type { TrackingCounts } from '../domain/entities/tracking.js';
import type { TrackingRepo } from '../db/index.js';
import { invalid, notFound } from '../errors.js';
import { isOneOf, STREAMS } from '../domain/catalog.js';
import type { Principal } from './auth-service.js';
import type { BatchService } from './batch-service.js';
import type { EmailQueryService, ListEmailsQuery } from './email-query-service.js';
import type { ScheduleService } from './schedule-service.js';

export const STATS_DAYS = { default: 30, max: 90 } as const;

export interface OperatorDeps {
  accounts: Pick<AccountsRepo, 'get'>;
  owners: Pick<OwnersRepo, 'ofEmail' | 'ofScheduled'>;
  events: Pick<EventsRepo, 'timeline' | 'perDay'>;
  suppressions: Pick<SuppressionsRepo, 'delete'>;
  tracking: Pick<TrackingRepo, 'counts'>;
  query: EmailQueryService;
  schedule: ScheduleService;
  batch: BatchService;
}

/**
 * What operators see and do inside an account through the management API. They act as the account with
 * every permission, through the same use cases as its own API keys, so the rules (filters, pagination,
 * the cancel rules) are the ones senders get.
 */
export function createOperatorService(deps: OperatorDeps) {
  async function actAs(accountId: string | undefined, what: string, id: string): Promise<Principal> {
    const account = accountId === undefined ? undefined : await deps.accounts.get(accountId);
    if (!account) throw notFound(what, id);
    return {
      keyId: '',
      accountId: account.id,
      permission: 'all',
      allowedDomains: [],
      accountStatus: 'healthy',
      dailyQuota: account.dailyQuota,
    };
  }
  const actAsAccount = (accountId: string) => actAs(accountId, 'account', accountId);

  return {
    listEmails: async (accountId: string, q: ListEmailsQuery) => deps.query.list(await actAsAccount(accountId), q),
    listBatches: async (accountId: string, q: { page: number; limit: number; status: string }) =>
      deps.batch.list(await actAsAccount(accountId), q),
    listScheduled: async (accountId: string, q: { page: number; limit: number; status: string }) =>
      deps.schedule.list(await actAsAccount(accountId), q),

    async cancelScheduled(id: string): Promise<{ success: true; message: string }> {
      return deps.schedule.cancel(await actAs(await deps.owners.ofScheduled(id), 'scheduled email', id), id);
    },

    /**
     * The email, its account, and every event in the order it happened: why the email is in its state. With
     * how often it was opened and clicked, repeats that made no event included.
     */
    async emailDetail(id: string): Promise<{
      email: EmailRow;
      attachments: StoredAttachment[];
      accountId: string;
      events: EventRow[];
      tracking: TrackingCounts;
    }> {
      const principal = await actAs(await deps.owners.ofEmail(id), 'email', id);
      // The email first, its events after: an outcome commits status and events together, so events read later
      // include every one that led to the status read (read at once, the two could come from different moments).
      const { email, attachments } = await deps.query.get(principal, id);
      const [events, tracking] = await Promise.all([deps.events.timeline(id), deps.tracking.counts(id)]);
      return { email, attachments, accountId: principal.accountId, events, tracking };
    },

    /** Per UTC day; `stream` ('' for all mail) counts only that stream's emails and events. */
    async stats(accountId: string, days: number, stream = ''): Promise<DayCounts[]> {
      if (days < 0 || days > STATS_DAYS.max) throw invalid(`days must be from 1 to ${STATS_DAYS.max}; got ${days}`);
      if (stream !== '' && !isOneOf(STREAMS, stream))
        throw invalid(
          `stream must be one of ${STREAMS.join(', ')}, or empty for all mail; got ${JSON.stringify(stream.slice(0, 40))}`,
        );
      await actAsAccount(accountId);
      return deps.events.perDay(accountId, days === 0 ? STATS_DAYS.default : days, stream === '' ? undefined : stream);
    },

    async deleteSuppression(id: string): Promise<void> {
      if (!(await deps.suppressions.delete(id))) throw notFound('suppression', id);
    },
  };
}
export type OperatorService = ReturnType<typeof createOperatorService>;
