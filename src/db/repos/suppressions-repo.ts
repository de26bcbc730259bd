import type { Sql } from '../sql.js';
import { addressDigest } from './address-digest.js';
import type { SuppressionRow } from '../../domain/entities/suppressions.js';

type Raw = {
  id: string;
  account_id: string;
  address: string;
  reason: 'bounce' | 'complaint';
  email_id: string | null;
  created_at: Date;
};
const toSuppression = (r: Raw): SuppressionRow => ({
  id: r.id,
  accountId: r.account_id,
  address: r.address,
  reason: r.reason,
  emailId: r.email_id ?? '',
  createdAt: r.created_at,
});

/** Addresses an account no longer sends to (lower case), put there by a hard bounce or a complaint. */
export function createSuppressionsRepo(sql: Sql) {
  return {
    async list(accountId: string): Promise<SuppressionRow[]> {
      return (
        await sql<Raw[]>`select * from suppressions where account_id = ${accountId} order by id desc limit 1000`
      ).map(toSuppression);
    },

    async delete(id: string): Promise<boolean> {
      return (await sql`delete from suppressions where id = ${id} returning id`).length > 0;
    },

    /**
     * Of `addresses` (lower case), those suppressed for each account, as `account_id + ' ' + address`: kept as
     * written, or as the digest an erasure left (address-digest.ts).
     */
    async matching(accountIds: string[], addresses: string[]): Promise<Set<string>> {
      if (accountIds.length === 0 || addresses.length === 0) return new Set();
      const rows = await sql<{ account_id: string; address: string }[]>`
        with wanted as (select a as address, ${addressDigest(sql, sql`a`)} as digest from unnest(${addresses}::text[]) a)
        select s.account_id, w.address from wanted w join suppressions s on s.address = w.address and s.account_id = any(${accountIds})
        union
        select s.account_id, w.address from wanted w join suppressions s on s.address = w.digest and s.account_id = any(${accountIds})`;
      return new Set(rows.map((r) => `${r.account_id} ${r.address}`));
    },
  };
}
export type SuppressionsRepo = ReturnType<typeof createSuppressionsRepo>;
