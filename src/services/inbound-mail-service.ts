import { Readable } from 'node:stream';
import type { InboundReceiveRepo, NewInboundEmail } from '../db/index.js';
import { isReturnPath } from '../delivery/message/return-path.js';
import { isUnsubscribeAddress } from '../delivery/message/unsubscribe-token.js';
import { asciiDomain } from '../domain/domain-name.js';
import type {
  InboundAttachmentRow,
  InboundAuthentication,
  InboundRecipient,
  ParsedInbound,
} from '../domain/entities/inbound.js';
import { newId } from '../ids.js';
import { attachmentKey, rawKey, type BlobStore } from '../inbound/blob-store.js';
import { UnreadableMessage, type RoutedEnvelope, type RoutedMail } from '../inbound/report-listener.js';
import type { Logger } from '../logger.js';

/**
 * A message this small is kept in memory once while it is stored, so that parsing and authenticating it read
 * no bytes back from the store (most mail is far smaller; a report mailed in the same transaction is read from
 * it too). Larger ones are read back from the store, streamed, for each.
 */
export const INBOUND_IN_MEMORY_BYTES = 1024 * 1024;

/** An attachment as the parser found it, before its bytes are stored. */
export type AttachmentInfo = Omit<InboundAttachmentRow, 'key' | 'size'>;

/** inbound/inbound-parse.ts's parseInbound: the message read once, each attachment's bytes handed to `saveAttachment`. */
export type ParseInbound = (
  source: Readable,
  options: {
    saveAttachment(index: number, content: Readable, info: AttachmentInfo): Promise<{ key: string; size: number }>;
  },
) => Promise<Omit<ParsedInbound, 'authentication'>>;

/** inbound/inbound-auth.ts's authenticateInbound, its DNS resolver already given. */
export type AuthenticateInbound = (
  source: Readable | Buffer,
  envelope: { remoteAddress: string; helo: string; mailFrom: string },
) => Promise<InboundAuthentication>;

export interface InboundMailDeps {
  blobs: BlobStore;
  receipts: Pick<InboundReceiveRepo, 'isRoutedDomain' | 'record'>;
  /** inbound-routes-service.ts's resolve: the route that takes an address, with its mailbox hash. */
  routes: { resolve(address: string): Promise<InboundRecipient | undefined> };
  /** The report listener's own rule for return paths, unsubscribe and feedback-loop addresses (a valid token). */
  reports: { acceptsRecipient(address: string): boolean };
  parse: ParseInbound;
  authenticate: AuthenticateInbound;
  /** MAILER_INBOUND_MAX_BYTES. */
  maxBytes: number;
  logger: Pick<Logger, 'info' | 'warn'>;
  now?: () => Date;
}

/** Passes `source` on, keeping a copy of it while it stays within `maxBytes` (`kept()` then; else undefined). */
function keeping(source: AsyncIterable<Buffer>, maxBytes: number) {
  let chunks: Buffer[] | undefined = [];
  let size = 0;
  return {
    async *stream(): AsyncGenerator<Buffer> {
      for await (const chunk of source) {
        size += chunk.length;
        if (chunks && size <= maxBytes) chunks.push(chunk);
        else chunks = undefined;
        yield chunk;
      }
    },
    kept: () => (chunks ? Buffer.concat(chunks, size) : undefined),
  };
}

/**
 * The inbound MX's use case (CONTRACT.md "Inbound mail"): which recipients it takes, and a message for inbound
 * routes from its bytes to committed rows.
 *
 * Recipients: a return path or an unsubscribe address is taken only with a valid token, as before; an address a
 * route takes is the route's; any other address at a domain that has routes is refused (550 5.1.1). An address at
 * a domain with no route is taken for the report handling as before (the feedback-loop address registered with
 * mailbox providers, whose reports prove themselves by what they quote).
 *
 * A message: its bytes stream into the blob store as they arrive (`<in_id>/raw`); then it is parsed (its
 * attachments stored as the parser reaches them) and authenticated, and in one transaction it becomes an inbound
 * email per route recipient with its `inbound` event (and a `reply` event on the email it answers). A message to
 * several route recipients (one account's or several) becomes one inbound email per recipient address, each
 * with its own copy of the bytes (copied within the store): each is its account's, erased and expired alone,
 * and every recipient's webhook sees its own mailbox_hash. Anything failing on the way removes every byte written
 * and throws (the listener answers 451): no row, no blobs.
 */
export function createInboundMailService(deps: InboundMailDeps) {
  const { blobs, logger } = deps;
  const now = deps.now ?? (() => new Date());

  return {
    maxBytes: deps.maxBytes,

    async recipient(address: string): Promise<InboundRecipient | 'report' | undefined> {
      if (isReturnPath(address) || isUnsubscribeAddress(address))
        return deps.reports.acceptsRecipient(address) ? 'report' : undefined;
      const routed = await deps.routes.resolve(address);
      if (routed) return routed;
      const domain = asciiDomain(address.slice(address.lastIndexOf('@') + 1));
      if (domain === undefined || (await deps.receipts.isRoutedDomain(domain))) return undefined;
      return deps.reports.acceptsRecipient(address) ? 'report' : undefined;
    },

    async receive(
      source: AsyncIterable<Buffer>,
      envelope: RoutedEnvelope,
    ): Promise<{ raw: Buffer | undefined } | 'too_large'> {
      // One inbound email per recipient address (the same address twice in RCPT TO is one).
      const seen = new Set<string>();
      const recipients = envelope.recipients.filter((r) => {
        const key = r.address.toLowerCase();
        if (seen.has(key)) return false;
        seen.add(key);
        return true;
      });
      const ids = recipients.map(() => newId('inbound'));
      const first = ids[0]!;
      const written: string[] = [];
      const incoming = keeping(source, INBOUND_IN_MEMORY_BYTES);
      written.push(rawKey(first));
      const stored = await blobs.write(rawKey(first), incoming.stream(), deps.maxBytes);
      if (stored === 'too_large') return 'too_large';
      const small = incoming.kept();
      // Whether the store failed while the parse read or wrote: then the parse's failure is no fault of the message.
      let storeFailed = false;
      const fromStore = () =>
        blobs.read(rawKey(first)).once('error', () => {
          storeFailed = true;
        });
      try {
        const parsed = await deps
          .parse(small ? Readable.from([small]) : fromStore(), {
            async saveAttachment(index, content) {
              const key = attachmentKey(first, index);
              written.push(key);
              const saved = await blobs.write(key, content, Number.POSITIVE_INFINITY).catch((err: unknown) => {
                storeFailed = true;
                throw err;
              });
              return { key, size: saved === 'too_large' ? 0 : saved.size };
            },
          })
          .catch((err: unknown) => {
            // Trying again would fail again: the sender is told so (554) instead of retrying for days.
            if (storeFailed) throw err;
            throw new UnreadableMessage('the message could not be parsed', { cause: err });
          });
        const authentication = await deps.authenticate(small ?? fromStore(), {
          remoteAddress: envelope.remoteAddress,
          helo: envelope.helo,
          mailFrom: envelope.mailFrom,
        });
        const receivedAt = now();
        const rows: NewInboundEmail[] = [];
        for (const [i, r] of recipients.entries()) {
          const id = ids[i]!;
          if (id !== first) {
            written.push(rawKey(id));
            await blobs.copy(rawKey(first), rawKey(id));
          }
          const attachments = await Promise.all(
            parsed.attachments.map(async (a, n) => {
              if (id === first) return a;
              const key = attachmentKey(id, n);
              written.push(key);
              await blobs.copy(a.key, key);
              return { ...a, key };
            }),
          );
          rows.push({
            ...parsed,
            attachments,
            authentication,
            id,
            accountId: r.recipient.route.accountId,
            routeId: r.recipient.route.id,
            receivedAt,
            envelopeFrom: envelope.mailFrom,
            envelopeTo: r.address,
            remoteAddress: envelope.remoteAddress,
            mailboxHash: r.recipient.mailboxHash,
            rawKey: rawKey(id),
            rawSize: stored.size,
          });
        }
        const recorded = await deps.receipts.record(rows);
        logger.info(
          {
            inbound: recorded.map((r) => r.id),
            size: stored.size,
            attachments: parsed.attachments.length,
            replyTo: recorded.flatMap((r) => (r.replyToEmailId ? [r.replyToEmailId] : [])),
          },
          'inbound message received',
        );
        return { raw: small };
      } catch (err) {
        await blobs
          .remove(written)
          .catch((cause: unknown) =>
            logger.warn({ err: cause, keys: written.length }, 'bytes of a message not stored left for the sweep'),
          );
        throw err;
      }
    },
  } satisfies RoutedMail;
}
export type InboundMailService = ReturnType<typeof createInboundMailService>;
