import type { RetentionRepo } from '../db/index.js';
import { utcDay } from '../domain/quota.js';
import { idAt, type IdKind } from '../ids.js';
import type { Logger } from '../logger.js';

const DAY_MS = 86_400_000;

/** Days content, and history, are kept (config: retention*Days); 0 keeps them forever. */
export interface RetentionPolicy {
  contentDays: number;
  eventsDays: number;
}

/** What one run removed, by kind, and whether it got through everything due (else the next run goes on). */
export interface RetentionRun {
  emailContents: number;
  scheduledContents: number;
  attachments: number;
  webhookDeliveries: number;
  webhookAttempts: number;
  events: number;
  trackingWindows: number;
  caughtMessages: number;
  /** Inbound emails past the content days, deleted whole (their events, deliveries and attempts counted above). */
  inboundEmails: number;
  /** Stored chunks of inbound mail deleted: those of the inbound emails, and those no inbound email names. */
  inboundBlobChunks: number;
  /** Per-key daily counts of days before yesterday (UTC): only today's is read. */
  keyQuotaDays: number;
  complete: boolean;
}

export const RETENTION_BATCH = { rows: 2000, budgetMs: 5 * 60_000 } as const;

/**
 * How old stored bytes no inbound email names must be before they are swept: no message still arriving is that
 * old (the listener ends a session after minutes), so what is left is a crash's.
 */
export const ORPHAN_BLOB_AGE_MS = 3_600_000;

type Counts = Omit<RetentionRun, 'complete'>;
/** One kind of removal: a batch of at most `limit` rows, and where its counts go. */
interface Step {
  days: number;
  kind: IdKind;
  run(before: string, limit: number): Promise<Partial<Counts> & { rows: number }>;
}

/**
 * Retention: removes, in batches of a few thousand rows (one short statement each), what is older than the
 * policy allows, oldest first, until everything due is gone or the time budget is spent. Run by a Temporal
 * schedule (temporal/retention-schedule.ts); a run that stops on its budget leaves the rest to the next.
 */
export function createRetentionService(deps: {
  repo: RetentionRepo;
  removeFile: (path: string) => Promise<void>;
  logger: Logger;
  now?: () => Date;
  batch?: { rows: number; budgetMs: number };
}) {
  const { repo } = deps;
  const now = deps.now ?? (() => new Date());
  const batch = deps.batch ?? RETENTION_BATCH;

  function steps(p: RetentionPolicy): Step[] {
    // Webhook deliveries go before events: an event is deleted once no delivery refers to it.
    return [
      {
        days: p.contentDays,
        kind: 'email',
        run: async (b, l) => {
          const r = await repo.expireEmailContent(b, l);
          return { rows: r.rows, emailContents: r.rows, attachments: r.attachments };
        },
      },
      {
        days: p.contentDays,
        kind: 'scheduled',
        run: async (b, l) => {
          const r = await repo.expireScheduledContent(b, l);
          return { rows: r.rows, scheduledContents: r.rows, attachments: r.attachments };
        },
      },
      {
        days: p.eventsDays,
        kind: 'event',
        run: async (b, l) => {
          const r = await repo.deleteWebhookDeliveries(`whd_${b.slice('evt_'.length)}`, l);
          return { rows: r.rows, webhookDeliveries: r.rows, webhookAttempts: r.attachments };
        },
      },
      {
        days: p.eventsDays,
        kind: 'event',
        run: async (b, l) => {
          const r = await repo.deleteEvents(b, l);
          return { rows: r.rows, events: r.rows };
        },
      },
      {
        // Inbound mail is content whole (CONTRACT.md: retention covers it like outbound): it goes at the content
        // days, with its `inbound` event and that event's finished deliveries, whatever the events' days.
        days: p.contentDays,
        kind: 'inbound',
        run: async (b, l) => {
          const r = await repo.deleteInboundEmails(b, l);
          return {
            rows: r.rows,
            inboundEmails: r.inboundEmails,
            inboundBlobChunks: r.blobChunks,
            events: r.events,
            webhookDeliveries: r.webhookDeliveries,
            webhookAttempts: r.webhookAttempts,
          };
        },
      },
      {
        days: p.eventsDays,
        kind: 'email',
        run: async (b, l) => {
          const r = await repo.deleteTrackingWindows(b, l);
          return { rows: r.rows, trackingWindows: r.rows };
        },
      },
      {
        days: p.eventsDays,
        kind: 'caught',
        run: async (b, l) => {
          const r = await repo.deleteCaughtMessages(b, l);
          // The row is gone first: a file left behind (another worker's data dir) holds nothing the API shows.
          await Promise.all(
            r.paths.map((path) =>
              deps
                .removeFile(path)
                .catch((err: unknown) => deps.logger.warn({ err, path }, "could not remove a caught message's file")),
            ),
          );
          return { rows: r.rows, caughtMessages: r.rows };
        },
      },
    ];
  }

  return {
    async run(policy: RetentionPolicy): Promise<RetentionRun> {
      const deadline = Date.now() + batch.budgetMs;
      const counts: Counts = {
        emailContents: 0,
        scheduledContents: 0,
        attachments: 0,
        webhookDeliveries: 0,
        webhookAttempts: 0,
        events: 0,
        trackingWindows: 0,
        caughtMessages: 0,
        inboundEmails: 0,
        inboundBlobChunks: 0,
        keyQuotaDays: 0,
      };
      let complete = true;
      for (const step of steps(policy)) {
        if (step.days === 0) continue;
        const before = idAt(step.kind, new Date(now().getTime() - step.days * DAY_MS));
        for (;;) {
          if (Date.now() >= deadline) {
            complete = false;
            break;
          }
          const { rows, ...removed } = await step.run(before, batch.rows);
          for (const [k, v] of Object.entries(removed) as [keyof Counts, number][]) counts[k] += v;
          if (rows < batch.rows) break;
        }
      }
      // Whatever the policy: bytes a crash left behind are nobody's content.
      for (;;) {
        if (Date.now() >= deadline) {
          complete = false;
          break;
        }
        const orphans = await repo.deleteOrphanInboundBlobs(new Date(now().getTime() - ORPHAN_BLOB_AGE_MS), batch.rows);
        counts.inboundBlobChunks += orphans.rows;
        if (orphans.rows < batch.rows) break;
      }
      // Whatever the policy too: a key's count of a past day limits nothing. Yesterday's stays, for a send begun
      // before midnight that gives its quota back after it.
      const yesterday = utcDay(new Date(now().getTime() - DAY_MS));
      for (;;) {
        if (Date.now() >= deadline) {
          complete = false;
          break;
        }
        const days = await repo.deleteKeyQuotaUsage(yesterday, batch.rows);
        counts.keyQuotaDays += days.rows;
        if (days.rows < batch.rows) break;
      }
      const run = { ...counts, complete };
      if (Object.values(counts).some((n) => n > 0) || !complete)
        deps.logger.info(run, 'retention removed expired data');
      return run;
    },
  };
}
export type RetentionService = ReturnType<typeof createRetentionService>;
