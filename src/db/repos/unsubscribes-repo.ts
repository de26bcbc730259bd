import type { Sql, Tx } from '../sql.js';
import { jsonb } from '../sql.js';
import { addressKey } from '../../domain/address.js';
import { ERASED_ADDRESS } from '../../domain/erasure.js';
import type { UnsubscribeOutcome, UnsubscribeTarget } from '../../domain/entities/unsubscribes.js';
import type { NewEvent } from '../../domain/events.js';

type Raw = {
  id: string;
  account_id: string;
  recipient: string | null;
  topic: string | null;
  brand_name: string;
  brand_logo_url: string | null;
};

/** The key space of the advisory locks taken here (the two-integer form: apart from any single-key lock). */
const UNSUBSCRIBE_LOCK_CLASS = 0x756e7375; // "unsu"

/**
 * One-click unsubscribes (CONTRACT.md, "Streams, one-click unsubscribe and suppressions"): the broadcast email
 * a token names, and the suppression and event an unsubscribe from it writes.
 */
export function createUnsubscribesRepo(sql: Sql) {
  const targetOf = async (db: Sql | Tx, emailId: string) => {
    const [row] = await db<Raw[]>`
      select e.id, e.account_id, e.to_addresses[1] as recipient, e.topic,
        coalesce(a.brand_name, a.name) as brand_name, a.brand_logo_url
      from emails e join accounts a on a.id = e.account_id
      where e.id = ${emailId} and e.stream = 'broadcast'`;
    if (!row || row.recipient === null || addressKey(row.recipient) === ERASED_ADDRESS) return undefined;
    return {
      emailId: row.id,
      accountId: row.account_id,
      recipient: row.recipient,
      topic: row.topic,
      brandName: row.brand_name,
      brandLogoUrl: row.brand_logo_url,
    } satisfies UnsubscribeTarget;
  };

  return {
    /** The broadcast email `emailId` as its unsubscribe page shows it; undefined when there is none (or its recipient was erased). */
    target: (emailId: string): Promise<UnsubscribeTarget | undefined> => targetOf(sql, emailId),

    /**
     * Unsubscribes the recipient of broadcast email `emailId` in one transaction: a suppression of the address
     * for the account's broadcast mail (of the email's topic, when it had one; reason `unsubscribe`) unless one
     * is there already, and the email's `unsubscribe` event unless it has one, so the event is recorded once
     * however often the URL is posted or mailed. Two unsubscribes of one email at once are serialized on an
     * advisory lock of that email: the second reads the first's event. Webhooks subscribed to `unsubscribe`
     * get the event through the events table's trigger, in this same transaction.
     */
    async record(
      emailId: string,
      ids: { suppressionId: string; event: Omit<NewEvent<'unsubscribe'>, 'data' | 'type'> },
    ): Promise<{ outcome: UnsubscribeOutcome; target?: UnsubscribeTarget }> {
      return sql.begin(async (tx) => {
        await tx`select pg_advisory_xact_lock(${UNSUBSCRIBE_LOCK_CLASS}::int, hashtext(${emailId}))`;
        const target = await targetOf(tx, emailId);
        if (!target) return { outcome: 'unknown_email' as const };
        const data: NewEvent<'unsubscribe'>['data'] = { recipient: target.recipient, topic: target.topic };
        const [row] = await tx<{ recorded: number }[]>`
          with suppressed as (
            insert into suppressions (id, account_id, address, reason, email_id, scope, topic)
            values (${ids.suppressionId}, ${target.accountId}, ${addressKey(target.recipient)}, 'unsubscribe',
              ${emailId}, 'broadcast', ${target.topic ?? ''})
            on conflict (account_id, address, scope, topic) do nothing
            returning 1),
          recorded as (
            insert into events (id, email_id, account_id, type, data, created_at)
            select ${ids.event.id}, ${emailId}, ${target.accountId}, 'unsubscribe', ${jsonb(tx, data)}, ${ids.event.at}
            where not exists (select 1 from events where email_id = ${emailId} and type = 'unsubscribe')
            returning 1)
          select (select count(*) from recorded)::int as recorded, (select count(*) from suppressed)::int as suppressed`;
        return { outcome: row?.recorded === 1 ? ('recorded' as const) : ('repeated' as const), target };
      }) as Promise<{ outcome: UnsubscribeOutcome; target?: UnsubscribeTarget }>;
    },
  };
}
export type UnsubscribesRepo = ReturnType<typeof createUnsubscribesRepo>;
