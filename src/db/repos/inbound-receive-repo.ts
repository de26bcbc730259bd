import type { InboundEmailRow } from '../../domain/entities/inbound.js';
import { storedInboundEventData } from '../../domain/inbound-json.js';
import { newId } from '../../ids.js';
import { jsonb, type Sql, type Tx } from '../sql.js';

/** A received message for one route, ready to store: its row (reply_to_email_id still to find). */
export type NewInboundEmail = Omit<InboundEmailRow, 'replyToEmailId'>;

/** What was stored for one inbound email: its id, and the email it answers (null: none of the account's). */
export interface RecordedInbound {
  id: string;
  replyToEmailId: string | null;
}

/**
 * The Message-IDs a reply may name, most likely first: In-Reply-To (the message answered), then References
 * from the last (the newest) back. Each in the form emails.header_message_id keeps, `<...>`: a reference
 * written without its angle brackets matches all the same.
 */
export function replyCandidates(row: Pick<NewInboundEmail, 'inReplyTo' | 'references'>): string[] {
  const bracketed = (id: string) => {
    const t = id.trim();
    if (t === '' || t === '<>') return '';
    return t.startsWith('<') && t.endsWith('>') ? t : `<${t.replace(/^<|>$/g, '')}>`;
  };
  const ordered = [row.inReplyTo, ...[...row.references].reverse()].map(bracketed).filter((id) => id !== '');
  return [...new Set(ordered)];
}

/** The account's email a message answers, by its candidates in order, or null. */
async function replyTarget(tx: Tx, accountId: string, candidates: string[]): Promise<string | null> {
  if (candidates.length === 0) return null;
  const rows = await tx<{ id: string; header_message_id: string }[]>`
    select id, header_message_id from emails
    where header_message_id = any(${candidates}::text[]) and account_id = ${accountId}`;
  for (const candidate of candidates) {
    const found = rows.find((r) => r.header_message_id === candidate);
    if (found) return found.id;
  }
  return null;
}

const attachmentsJson = (row: NewInboundEmail) =>
  row.attachments.map((a) => ({
    filename: a.filename,
    content_type: a.contentType,
    size: a.size,
    content_id: a.contentId,
    key: a.key,
  }));

/**
 * The receive side of inbound mail (services/inbound-mail-service.ts): which domains have routes, and storing
 * received messages with their events. (The reads the API serves are in inbound-emails-repo.ts.)
 */
export function createInboundReceiveRepo(sql: Sql) {
  return {
    /** Whether any route is on `domain` (key form): its mail is for routes only, an unknown local part is refused. */
    async isRoutedDomain(domain: string): Promise<boolean> {
      const [row] = await sql<{ routed: boolean }[]>`
        select exists (select 1 from inbound_routes where domain = ${domain}) as routed`;
      return row?.routed ?? false;
    },

    /**
     * Stores the inbound emails one message became (one per recipient a route took) in one transaction, each
     * with its `inbound` event (the email as the API shows it, less the bodies the row holds: inbound-json.ts)
     * and, when it answers one of its account's emails (In-Reply-To, References), reply_to_email_id and a `reply`
     * event on that email. The webhook fan-out trigger queues their deliveries in the same transaction. All or
     * nothing.
     */
    async record(emails: NewInboundEmail[]): Promise<RecordedInbound[]> {
      return sql.begin(async (tx) => {
        const recorded: RecordedInbound[] = [];
        for (const email of emails) {
          const replyToEmailId = await replyTarget(tx, email.accountId, replyCandidates(email));
          const row: InboundEmailRow = { ...email, replyToEmailId };
          await tx`
            insert into inbound_emails (id, account_id, route_id, received_at, envelope_from, envelope_to,
              remote_address, from_address, from_name, to_addresses, cc_addresses, reply_to_addresses, subject,
              text_body, html_body, stripped_text, headers, message_id, in_reply_to, mailbox_hash, attachments,
              authentication, raw_key, raw_size, reply_to_email_id)
            values (${row.id}, ${row.accountId}, ${row.routeId}, ${row.receivedAt}, ${row.envelopeFrom},
              ${row.envelopeTo}, ${row.remoteAddress}, ${row.from}, ${row.fromName}, ${jsonb(tx, row.to)},
              ${jsonb(tx, row.cc)}, ${jsonb(tx, row.replyTo)}, ${row.subject}, ${row.text}, ${row.html},
              ${row.strippedText}, ${jsonb(tx, row.headers)}, ${row.messageId}, ${row.inReplyTo},
              ${row.mailboxHash}, ${jsonb(tx, attachmentsJson(row))}, ${jsonb(tx, row.authentication)},
              ${row.rawKey}, ${row.rawSize}, ${replyToEmailId})`;
          await tx`
            insert into events (id, email_id, inbound_id, account_id, type, data, created_at)
            values (${newId('event')}, null, ${row.id}, ${row.accountId}, 'inbound',
              ${jsonb(tx, storedInboundEventData(row))}, ${row.receivedAt})`;
          if (replyToEmailId !== null)
            await tx`
              insert into events (id, email_id, inbound_id, account_id, type, data, created_at)
              values (${newId('event')}, ${replyToEmailId}, null, ${row.accountId}, 'reply',
                ${jsonb(tx, { inbound_id: row.id, from: row.from })}, ${row.receivedAt})`;
          recorded.push({ id: row.id, replyToEmailId });
        }
        return recorded;
      }) as Promise<RecordedInbound[]>;
    },
  };
}
export type InboundReceiveRepo = ReturnType<typeof createInboundReceiveRepo>;
