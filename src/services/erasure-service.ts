import crypto from 'node:crypto';
import type { AccountsRepo } from '../db/index.js';
import { ADDRESS_DIGEST_SALT } from '../db/index.js';
import { noErasure, type ErasureRepo } from '../db/index.js';
import type { ErasureCounts } from '../domain/entities/erasure.js';
import type { ErasureTracesRepo } from '../db/index.js';
import type { SettingsRepo } from '../db/index.js';
import { describeAddressProblem, readMailbox } from '../domain/address.js';
import { erasureKey } from '../domain/erasure.js';
import { AppError, invalid, notFound } from '../errors.js';
import type { Logger } from '../logger.js';

/** Rows read per statement while looking for an address: each scan is a short range of an id index. */
export const ERASURE_SCAN_ROWS = 5000;

export interface ErasureDeps {
  erasure: ErasureRepo;
  traces: ErasureTracesRepo;
  accounts: Pick<AccountsRepo, 'get'>;
  settings: Pick<SettingsRepo, 'getOrCreate'>;
  removeFile: (path: string) => Promise<void>;
  logger: Logger;
}

const add = (into: ErasureCounts, more: Partial<ErasureCounts>) => {
  for (const [k, v] of Object.entries(more) as [keyof ErasureCounts, number][]) into[k] += v;
};

/**
 * Erasure (GDPR) by an operator: one email's content, or every trace of one address in an account or the
 * whole installation. What is erased is rewritten in place (an email keeps its id, status and timestamps, and
 * the API's shape) or deleted where nothing refers to it (attachments, caught mail, tracking windows,
 * Idempotency-Key answers). A suppression of the address stays as a salted digest, so mail to it is still
 * refused. Emails still being delivered and scheduled emails still enqueued are left and counted
 * (`skipped_pending`): cancel or let them finish, then erase again. Inbound mail the address sent or received is
 * deleted whole (one whose `inbound` webhook delivery is still pending is skipped the same way); erasing one
 * email leaves the replies it received, which are other people's messages (erase their sender to remove them).
 */
export function createErasureService(deps: ErasureDeps) {
  const removeFiles = (paths: string[]) =>
    Promise.all(
      paths.map((path) =>
        deps
          .removeFile(path)
          .catch((err: unknown) => deps.logger.warn({ err, path }, "could not remove an erased caught message's file")),
      ),
    );

  /** Walks a table's ids in chunks, handing each chunk's matches on. */
  async function eachChunk(
    scan: (after: string) => Promise<{ last: string | undefined; hits: string[] }>,
    onHits: (ids: string[]) => Promise<void>,
  ) {
    for (let after = ''; ;) {
      const { last, hits } = await scan(after);
      if (hits.length > 0) await onHits(hits);
      if (last === undefined) return;
      after = last;
    }
  }

  /** The address to erase, bare (a name is refused: it is not what is stored and matched). */
  function bareAddress(input: string): string {
    const parsed = readMailbox(input);
    if (typeof parsed === 'string') throw invalid(`address ${describeAddressProblem(parsed)}`);
    if (parsed.name !== '') throw invalid('address: give the bare address (user@example.com), without a display name');
    return parsed.address;
  }

  return {
    async eraseEmail(id: string): Promise<ErasureCounts> {
      const result = await deps.erasure.eraseEmail(id);
      if (result === 'not_found') throw notFound('email', id);
      if (result === 'pending') {
        throw new AppError(
          'conflict',
          `the email ${id} is still being delivered (pending): erase it once it is delivered or bounced`,
        );
      }
      await removeFiles(result.paths);
      deps.logger.info({ emailId: id, ...result.counts }, 'email content erased');
      return result.counts;
    },

    async eraseRecipient(input: { address: string; accountId: string }): Promise<ErasureCounts> {
      const address = bareAddress(input.address);
      const accountId = input.accountId === '' ? undefined : input.accountId;
      if (accountId !== undefined && !(await deps.accounts.get(accountId))) throw notFound('account', accountId);
      const key = erasureKey(address);
      const counts = noErasure();
      await eachChunk(
        (after) => deps.erasure.scanEmails(key, accountId, after, ERASURE_SCAN_ROWS),
        async (ids) => {
          const r = await deps.erasure.redactEmails(ids, address);
          add(counts, r.counts);
          await removeFiles(r.paths);
        },
      );
      // Inbound mail the address sent or received: deleted whole (erasure-repo.ts deleteInbound).
      await eachChunk(
        (after) => deps.erasure.scanInbound(key, accountId, after, ERASURE_SCAN_ROWS),
        async (ids) => {
          add(counts, await deps.erasure.deleteInbound(ids, address));
        },
      );
      await eachChunk(
        (after) => deps.traces.scanScheduled(key, accountId, after, ERASURE_SCAN_ROWS),
        async (ids) => {
          add(counts, await deps.traces.redactScheduled(ids, address));
        },
      );
      // Caught mail belongs to no account: the copies of the account's emails went with them above.
      if (accountId === undefined) {
        await eachChunk(
          async (after) => {
            const r = await deps.traces.deleteCaught(key, after, ERASURE_SCAN_ROWS);
            counts.caughtMessages += r.deleted;
            await removeFiles(r.paths);
            return { last: r.last, hits: [] };
          },
          async () => {},
        );
      }
      await deps.settings.getOrCreate(ADDRESS_DIGEST_SALT, crypto.randomBytes(32).toString('base64url'));
      counts.suppressions = await deps.traces.hashSuppressions(key, accountId);
      counts.idempotencyKeys = await deps.traces.dropIdempotencyKeys(key, accountId);
      // The address itself is not logged: that would be a trace of it.
      deps.logger.info({ accountId: accountId ?? 'all', ...counts }, 'recipient address erased');
      return counts;
    },
  };
}
export type ErasureService = ReturnType<typeof createErasureService>;
