import type { Sql } from '../sql.js';
import { AppError } from '../../errors.js';
import { newId } from '../../ids.js';
import { addressDigest } from './address-digest.js';
import type {
  NewSuppressionEntry,
  SuppressionFilter,
  SuppressionReason,
  SuppressionRow,
  SuppressionRule,
  SuppressionScope,
} from '../../domain/entities/suppressions.js';

type Raw = {
  id: string;
  account_id: string;
  address: string;
  reason: SuppressionReason;
  scope: SuppressionScope;
  topic: string;
  email_id: string | null;
  created_at: Date;
};
const toSuppression = (r: Raw): SuppressionRow => ({
  id: r.id,
  accountId: r.account_id,
  address: r.address,
  reason: r.reason,
  scope: r.scope,
  topic: r.topic,
  emailId: r.email_id ?? '',
  createdAt: r.created_at,
});

/** Rows an import inserts per statement: 4 arrays of this many elements are a few MB of parameters. */
const IMPORT_CHUNK = 25_000;
/** Rows an export reads per cursor fetch. */
const EXPORT_CHUNK = 2_000;

/**
 * Addresses an account no longer sends to, all of its mail or its broadcast mail (of one topic or all), kept in
 * their key form (address.ts addressKey): put there by a hard bounce, a complaint, a one-click unsubscribe, or the
 * account itself (API, import). Unique per account, address, scope and topic (migration 25).
 */
export function createSuppressionsRepo(sql: Sql) {
  /** The rows of `accountId` whose address is `address` or its erased digest. */
  const ofAddress = (accountId: string, address: string) =>
    sql`account_id = ${accountId} and (address = ${address} or address = ${addressDigest(sql, address)})`;

  const filtered = (accountId: string, f: SuppressionFilter) => {
    const email =
      f.email === undefined
        ? sql``
        : 'exact' in f.email
          ? sql`and address = ${f.email.exact}`
          : // strpos, not LIKE: the text is the caller's, and no character of it is a pattern.
            sql`and strpos(address, ${f.email.contains.toLowerCase()}) > 0`;
    return sql`account_id = ${accountId} ${email}
      ${f.reason === undefined ? sql`` : sql`and reason = ${f.reason}`}
      ${f.scope === undefined ? sql`` : sql`and scope = ${f.scope}`}
      ${f.topic === undefined ? sql`` : sql`and topic = ${f.topic}`}`;
  };

  return {
    /** The management API's list: an account's newest suppressions, at most 1000. */
    async list(accountId: string): Promise<SuppressionRow[]> {
      return (
        await sql<
          Raw[]
        >`select * from suppressions where account_id = ${accountId} order by created_at desc, id desc limit 1000`
      ).map(toSuppression);
    },

    /** The management API's delete, by id. */
    async delete(id: string): Promise<boolean> {
      return (await sql`delete from suppressions where id = ${id} returning id`).length > 0;
    },

    /** One page of an account's suppressions, newest first, and how many match in all. */
    async page(
      accountId: string,
      filter: SuppressionFilter,
      limit: number,
      offset: number,
    ): Promise<{ rows: SuppressionRow[]; total: number }> {
      const [rows, [count]] = await Promise.all([
        sql<Raw[]>`select * from suppressions where ${filtered(accountId, filter)}
          order by created_at desc, id desc limit ${limit} offset ${offset}`,
        sql<{ n: number }[]>`select count(*)::int as n from suppressions where ${filtered(accountId, filter)}`,
      ]);
      return { rows: rows.map(toSuppression), total: count?.n ?? 0 };
    },

    /**
     * Adds one suppression with `reason` unless the account has it already; answers the stored row either way
     * (the new one, or the one that was there, whatever its reason).
     */
    async add(
      accountId: string,
      entry: NewSuppressionEntry,
      reason: SuppressionReason,
    ): Promise<{ row: SuppressionRow; added: boolean }> {
      // Twice at most: a row another call is inserting at the same moment is skipped by the insert (which
      // waits for it) but not yet in the select's snapshot; the second round reads it.
      for (let round = 0; round < 2; round++) {
        const [r] = await sql<(Raw & { added: boolean })[]>`
          with added as (
            insert into suppressions (id, account_id, address, reason, scope, topic)
            values (${newId('suppression')}, ${accountId}, ${entry.address}, ${reason}, ${entry.scope}, ${entry.topic})
            on conflict (account_id, address, scope, topic) do nothing
            returning *)
          select *, true as added from added
          union all
          select *, false as added from suppressions
          where account_id = ${accountId} and address = ${entry.address} and scope = ${entry.scope}
            and topic = ${entry.topic} and not exists (select 1 from added)`;
        if (r) return { row: toSuppression(r), added: r.added };
      }
      throw new AppError('conflict', 'The suppression is being changed by another request; try again');
    },

    /**
     * Adds many suppressions with `reason` in a few set-based statements (an import's 100,000 rows in four),
     * in one transaction; those the account has already (or that repeat one earlier in `entries`) are left as
     * they are. Answers how many were added.
     */
    async addMany(accountId: string, entries: NewSuppressionEntry[], reason: SuppressionReason): Promise<number> {
      if (entries.length === 0) return 0;
      return sql.begin(async (tx) => {
        let added = 0;
        for (let i = 0; i < entries.length; i += IMPORT_CHUNK) {
          const chunk = entries.slice(i, i + IMPORT_CHUNK);
          const rows = await tx`
            insert into suppressions (id, account_id, address, reason, scope, topic)
            select id, ${accountId}, address, ${reason}, scope, topic
            from unnest(${chunk.map(() => newId('suppression'))}::text[], ${chunk.map((e) => e.address)}::text[],
              ${chunk.map((e) => e.scope)}::text[], ${chunk.map((e) => e.topic)}::text[]) as s(id, address, scope, topic)
            on conflict (account_id, address, scope, topic) do nothing`;
          added += rows.count;
        }
        return added;
      });
    },

    /**
     * Removes an account's suppressions of `address` (or of its erased digest): the one of `rule` when given,
     * else every one of the address. Answers how many were removed.
     */
    async remove(accountId: string, address: string, rule: SuppressionRule | undefined): Promise<number> {
      const which = rule === undefined ? sql`` : sql`and scope = ${rule.scope} and topic = ${rule.topic}`;
      return (await sql`delete from suppressions where ${ofAddress(accountId, address)} ${which}`).count;
    },

    /**
     * Every suppression of an account, oldest first, a chunk at a time from a cursor: an export streams them
     * without holding the list. The cursor's transaction sees one snapshot throughout.
     */
    async *everyOf(accountId: string): AsyncGenerator<SuppressionRow[]> {
      const cursor = sql<Raw[]>`
        select * from suppressions where account_id = ${accountId} order by created_at, id`.cursor(EXPORT_CHUNK);
      for await (const rows of cursor) yield rows.map(toSuppression);
    },

    /**
     * Of `addresses` (key form), the suppressions each account has of each, as `account_id + ' ' + address` to
     * the rules (scope, topic) found: kept as written, or as the digest an erasure left (address-digest.ts).
     * Which of them stops an email depends on its stream and topic (domain/suppression-rules.ts).
     */
    async matching(accountIds: string[], addresses: string[]): Promise<Map<string, SuppressionRule[]>> {
      const found = new Map<string, SuppressionRule[]>();
      if (accountIds.length === 0 || addresses.length === 0) return found;
      const rows = await sql<{ account_id: string; address: string; scope: SuppressionScope; topic: string }[]>`
        with wanted as (select a as address, ${addressDigest(sql, sql`a`)} as digest from unnest(${addresses}::text[]) a)
        select s.account_id, w.address, s.scope, s.topic from wanted w
          join suppressions s on s.address = w.address and s.account_id = any(${accountIds})
        union
        select s.account_id, w.address, s.scope, s.topic from wanted w
          join suppressions s on s.address = w.digest and s.account_id = any(${accountIds})`;
      for (const r of rows) {
        const key = `${r.account_id} ${r.address}`;
        const rules = found.get(key) ?? [];
        rules.push({ scope: r.scope, topic: r.topic });
        found.set(key, rules);
      }
      return found;
    },
  };
}
export type SuppressionsRepo = ReturnType<typeof createSuppressionsRepo>;
