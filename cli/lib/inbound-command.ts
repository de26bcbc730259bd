import fs from 'node:fs';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Flags } from '@oclif/core';
import type { InboundContentChunk, InboundEmail, ListInboundEmailsResponse } from '../../src/gen/mail/v1/inbound_pb.js';
import { AdminCommand, EmailCommand, MailerCommand, usageError } from './base-command.js';
import type { AdminClient, EmailClient } from './rpc.js';

/**
 * An account's inbound mail, read either as the account (its API key, the public API) or as the operator (the
 * admin token, the management API): the inbound commands take both, so an operator reads any account's inbox
 * with the same commands as the account itself.
 */
export interface Inbox {
  list(req: { page: number; pageSize: number }, signal?: AbortSignal): Promise<ListInboundEmailsResponse>;
  get(id: string): Promise<InboundEmail>;
  raw(id: string): AsyncIterable<InboundContentChunk>;
  attachment(id: string, n: number): AsyncIterable<InboundContentChunk>;
}

/** The public API's inbound calls, as the API key's account. */
export function accountInbox(api: EmailClient): Inbox {
  return {
    list: (req, signal) => api.listInboundEmails(req, { signal }),
    get: (id) => api.getInboundEmail({ id }),
    raw: (id) => api.getInboundRaw({ id }),
    attachment: (id, n) => api.getInboundAttachment({ id, n }),
  };
}

/** The management API's inbound calls; `accountId` is the account listed (a message's own id names it alone). */
export function operatorInbox(api: AdminClient, accountId: string | undefined): Inbox {
  return {
    list: (req, signal) => {
      if (accountId === undefined) throw usageError('--account is needed to list an inbox with the admin token');
      return api.listAccountInboundEmails({ accountId, ...req }, { signal });
    },
    get: (id) => api.getAccountInboundEmail({ id }),
    raw: (id) => api.getAccountInboundRaw({ id }),
    attachment: (id, n) => api.getAccountInboundAttachment({ id, n }),
  };
}

/** `--account`: read that account's inbox as the operator, with the admin token. */
export const inboxAccountFlag = Flags.string({
  char: 'a',
  summary: "Read this account's inbox as the operator, with the admin token (acc_...); default: the API key's account.",
});

/**
 * The inbound commands: `--api-key` (the account's own inbox) or, for operators, `--admin-token` with the
 * account named; the global flags of both kinds of command.
 */
export abstract class InboundCommand extends MailerCommand {
  static override baseFlags = {
    ...EmailCommand.baseFlags,
    'admin-token': AdminCommand.baseFlags['admin-token'],
  };

  /**
   * What a command acts through: the API key's account (the public API), or the operator's management API (the
   * admin token) when `operator` is given, with the account it names. `pick` makes the command's own view of either.
   */
  protected async acting<T>(
    flags: { url: string; 'api-key'?: string | undefined; 'admin-token'?: string | undefined },
    operator: { accountId?: string | undefined } | undefined,
    pick: { account(api: EmailClient): T; operator(api: AdminClient, accountId: string | undefined): T },
  ): Promise<T> {
    if (operator === undefined)
      return pick.account(
        await this.clientFor(
          flags.url,
          flags['api-key'],
          { missing: 'no API key: pass --api-key or set MAILER_API_KEY (operators: --account with the admin token)' },
          (rpc, base, key) => rpc.emailClient(base, key),
        ),
      );
    return pick.operator(
      await this.clientFor(
        flags.url,
        flags['admin-token'],
        { missing: 'no admin token: pass --admin-token or set MAILER_ADMIN_TOKEN' },
        (rpc, base, token) => rpc.adminClient(base, token),
      ),
      operator.accountId,
    );
  }

  /** The inbox to read: as the operator when `operator` (the admin token), else as the API key's account. */
  protected inbox(
    flags: { url: string; 'api-key'?: string | undefined; 'admin-token'?: string | undefined },
    operator: { accountId?: string | undefined } | undefined,
  ): Promise<Inbox> {
    return this.acting(flags, operator, { account: accountInbox, operator: operatorInbox });
  }
}

/** What saveChunks wrote: the bytes, their content type and the file name the service gave (attachments). */
export interface Saved {
  bytes: number;
  contentType: string;
  filename: string;
}

/**
 * Writes streamed bytes (the raw message, an attachment) to `output`, or to stdout when it is undefined, as they
 * come, never whole in memory. The first chunk is awaited before the file is opened, so a refusal (404) leaves no
 * empty file behind; a failure midway removes the partial one.
 */
export async function saveChunks(
  chunks: AsyncIterable<InboundContentChunk>,
  output: string | undefined,
): Promise<Saved> {
  const iterator = chunks[Symbol.asyncIterator]();
  const first = await iterator.next();
  const saved: Saved = {
    bytes: 0,
    contentType: first.done ? '' : first.value.contentType,
    filename: first.done ? '' : first.value.filename,
  };
  async function* bytes(): AsyncGenerator<Uint8Array> {
    for (let step = first; !step.done; step = await iterator.next()) {
      saved.bytes += step.value.data.length;
      if (step.value.data.length > 0) yield step.value.data;
    }
  }
  if (output === undefined) {
    // stdout stays open for what the command prints after.
    await pipeline(Readable.from(bytes()), process.stdout, { end: false });
    return saved;
  }
  try {
    await pipeline(Readable.from(bytes()), fs.createWriteStream(output));
  } catch (err) {
    await fs.promises.rm(output, { force: true });
    throw err;
  }
  return saved;
}
