import type { AccountsRepo, InboundBlobsRepo, InboundReadsRepo } from '../db/index.js';
import type { InboundEmailRow } from '../domain/entities/inbound.js';
import { RAW_MESSAGE_TYPE } from '../domain/inbound-content.js';
import { toPage } from '../domain/pagination.js';
import { AppError, invalid, notFound } from '../errors.js';

/** Stored bytes to hand out: as declared by the message (content type, file name), and the bytes in order. */
export interface InboundContent {
  contentType: string;
  /** The name the message gave ('' when none); the raw message is `<id>.eml`. */
  filename: string;
  size: number;
  chunks: AsyncIterable<Uint8Array>;
}

export interface InboundEmailsDeps {
  reads: Pick<InboundReadsRepo, 'list' | 'get' | 'ownerOf'>;
  /** The blob store's read (src/inbound/blob-store.ts): a key's bytes streamed, never held whole. */
  blobs: Pick<InboundBlobsRepo, 'read'>;
  accounts: Pick<AccountsRepo, 'get'>;
}

/**
 * Reading an account's inbound mail back (CONTRACT.md "Inbound mail"): the list newest first, one message, its
 * raw bytes exactly as received and each attachment's bytes. Every call names the account (an API key's own,
 * or the one the management API names); another account's message is a 404 exactly like a missing one.
 * Permissions are the API's (read_inbound), as for suppressions.
 */
export function createInboundEmailsService(deps: InboundEmailsDeps) {
  const { reads } = deps;

  async function get(accountId: string, id: string): Promise<InboundEmailRow> {
    const row = id === '' ? undefined : await reads.get(accountId, id);
    if (!row) throw notFound('inbound email', id);
    return row;
  }

  return {
    async list(
      accountId: string,
      q: { page: number; pageSize: number },
    ): Promise<{ rows: InboundEmailRow[]; total: number }> {
      const { limit, offset } = toPage(q.page, q.pageSize, 'page_size');
      return reads.list(accountId, limit, offset);
    },

    get,

    /** The message exactly as it arrived, streamed from the store. */
    async raw(accountId: string, id: string): Promise<InboundContent> {
      const row = await get(accountId, id);
      return {
        contentType: RAW_MESSAGE_TYPE,
        filename: `${row.id}.eml`,
        size: row.rawSize,
        chunks: deps.blobs.read(row.rawKey),
      };
    },

    /** Attachment `n` (from 0, in the order of `attachments`): 404 when the message has no such attachment. */
    async attachment(accountId: string, id: string, n: number): Promise<InboundContent> {
      if (!Number.isInteger(n) || n < 0) throw invalid(`n must be 0 or more, got ${n}`);
      const row = await get(accountId, id);
      const a = row.attachments[n];
      if (!a) {
        const count = row.attachments.length;
        throw new AppError(
          'not_found',
          `inbound email ${id} has no attachment ${n} (${count === 0 ? 'it has none' : `its attachments are 0 to ${count - 1}`})`,
        );
      }
      return { contentType: a.contentType, filename: a.filename ?? '', size: a.size, chunks: deps.blobs.read(a.key) };
    },

    /** The management API: the account must exist (a 404 naming it otherwise). */
    async knownAccount(accountId: string): Promise<string> {
      if (accountId === '' || !(await deps.accounts.get(accountId))) throw notFound('account', accountId);
      return accountId;
    },

    /** The management API names a message alone: the account it belongs to, or a 404. */
    async ownerOf(id: string): Promise<string> {
      const owner = id === '' ? undefined : await reads.ownerOf(id);
      if (owner === undefined) throw notFound('inbound email', id);
      return owner;
    },
  };
}
export type InboundEmailsService = ReturnType<typeof createInboundEmailsService>;
