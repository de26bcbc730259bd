import type { ScheduledRepo } from '../../db/index.js';
import type { LoadedEmail } from '../../domain/entities/delivery.js';
import { newId } from '../../ids.js';
import type { Logger } from '../../logger.js';
import type { PrebuiltMessages } from './prebuilt-messages.js';
import { pool } from '../queue/pool.js';

/** Most scheduled emails of one second built ahead, and most bytes of their drafts read for it. */
const PREPARE_LIMIT = 5000;
const PREPARE_BYTES = 64 * 1024 * 1024;
/** Messages built at once: the building is mostly waiting (stream turns, the signature in the thread pool). */
const CONCURRENCY = 16;

export interface ScheduledPreparer {
  /** Builds the messages of the emails due in [from, to) until `until` (ms); answers scheduled id → the email id each message names. */
  prepare(from: Date, to: Date, until: number): Promise<Map<string, string>>;
  /** Forgets messages built for emails that were not fired after all. */
  forget(emailIds: string[]): void;
}

/**
 * Builds scheduled emails' messages in the seconds before they fall due (workflows/scheduled-email.ts), with
 * the delivery's own builder (`buildAhead`, email-sender.ts), into this process's PrebuiltMessages, where
 * their send finds them. A message that fails to build, or is not built in time, is built when it is sent.
 */
export function createScheduledPreparer(deps: {
  scheduled: Pick<ScheduledRepo, 'upcoming'>;
  buildAhead: (loaded: LoadedEmail) => Promise<boolean>;
  prebuilt: Pick<PrebuiltMessages, 'drop'>;
  logger: Logger;
}): ScheduledPreparer {
  return {
    async prepare(from, to, until) {
      const upcoming = await deps.scheduled.upcoming(from, to, () => newId('email'), {
        limit: PREPARE_LIMIT,
        maxBytes: PREPARE_BYTES,
      });
      const prepared = new Map<string, string>();
      await pool(upcoming, CONCURRENCY, async ({ scheduledId, loaded }) => {
        // Past `until` the rest is left to be built when sent, so the firing is not held up.
        if (Date.now() >= until) return;
        try {
          if (await deps.buildAhead(loaded)) prepared.set(scheduledId, loaded.email.id);
        } catch (err) {
          deps.logger.warn({ err, scheduledId }, 'could not build a scheduled email ahead; it is built when sent');
        }
      });
      return prepared;
    },
    forget: (emailIds) => deps.prebuilt.drop(emailIds),
  };
}
