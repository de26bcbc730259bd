import type { AccountStatus, Permission } from '../../domain/catalog.js';
import type { Page } from '../../domain/pagination.js';
import type { Sql } from '../sql.js';
import type { ApiKeyRow, KeyPrincipalRow, UsageDelta } from '../../domain/entities/api-keys.js';

type Raw = {
  id: string;
  account_id: string;
  name: string;
  permission: Permission;
  allowed_domains: string[];
  key_prefix: string;
  created_at: Date;
  rate_limit: number | null;
  daily_quota: number | null;
  expires_at: Date | null;
  last_used_at: Date | null;
  request_count: string;
  error_count: string;
  email_sent_count: string;
  /** Only where the listing joined today's api_key_quota_usage. */
  sent_today?: number | null;
};
const toKey = (r: Raw): ApiKeyRow => ({
  id: r.id,
  accountId: r.account_id,
  name: r.name,
  permission: r.permission,
  allowedDomains: r.allowed_domains,
  keyPrefix: r.key_prefix,
  createdAt: r.created_at,
  rateLimit: r.rate_limit,
  dailyQuota: r.daily_quota,
  expiresAt: r.expires_at,
  lastUsedAt: r.last_used_at,
  usage: {
    requestCount: Number(r.request_count),
    errorCount: Number(r.error_count),
    emailSentCount: Number(r.email_sent_count),
    sentToday: r.sent_today ?? 0,
  },
});

export function createApiKeysRepo(sql: Sql) {
  return {
    async create(k: {
      id: string;
      accountId: string;
      name: string;
      permission: Permission;
      allowedDomains: string[];
      keyHash: Buffer;
      keyPrefix: string;
      /** The key's own limits; absent or null: none. */
      rateLimit?: number | null;
      dailyQuota?: number | null;
      expiresAt?: Date | null;
    }): Promise<ApiKeyRow> {
      const [row] = await sql<Raw[]>`
        insert into api_keys (id, account_id, name, permission, allowed_domains, key_hash, key_prefix,
          rate_limit, daily_quota, expires_at)
        values (${k.id}, ${k.accountId}, ${k.name}, ${k.permission}, ${k.allowedDomains}, ${k.keyHash}, ${k.keyPrefix},
          ${k.rateLimit ?? null}, ${k.dailyQuota ?? null}, ${k.expiresAt ?? null})
        returning *`;
      return toKey(row!);
    },

    /**
     * The live keys among `keyHashes` (each a key's SHA-256) with what their accounts allow: one indexed
     * statement for the keys of many requests (services/principal-lookup.ts).
     */
    async findPrincipals(keyHashes: Buffer[]): Promise<KeyPrincipalRow[]> {
      const rows = await sql<
        {
          id: string;
          key_hash: Buffer;
          account_id: string;
          permission: Permission;
          allowed_domains: string[];
          status: AccountStatus;
          daily_quota: number;
          rate_limit: number | null;
          key_daily_quota: number | null;
          expires_at: Date | null;
          fingerprint: string;
        }[]
      >`
        -- The hashes go as hex text: the driver sends an array of Buffers as one bytea value.
        select k.id, k.key_hash, k.account_id, k.permission, k.allowed_domains, a.status, a.daily_quota,
          k.rate_limit, k.daily_quota as key_daily_quota, k.expires_at, principal_fingerprint(k, a) as fingerprint
        from api_keys k join accounts a on a.id = k.account_id
        where k.key_hash = any(array(select decode(h, 'hex') from unnest(${keyHashes.map((h) => h.toString('hex'))}::text[]) h))
          and k.deleted_at is null`;
      return rows.map((row) => ({
        keyId: row.id,
        keyHash: row.key_hash,
        accountId: row.account_id,
        permission: row.permission,
        allowedDomains: row.allowed_domains,
        accountStatus: row.status,
        dailyQuota: row.daily_quota,
        rateLimit: row.rate_limit,
        keyDailyQuota: row.key_daily_quota,
        expiresAt: row.expires_at,
        fingerprint: row.fingerprint,
      }));
    },

    /** A page of the account's keys, oldest first, with `day`'s count of each key that has a daily_quota. */
    async listByAccount(accountId: string, page: Page, day: string): Promise<{ rows: ApiKeyRow[]; total: number }> {
      const [rows, [count]] = await Promise.all([
        sql<Raw[]>`
          select k.*, u.used as sent_today
          from api_keys k left join api_key_quota_usage u on u.api_key_id = k.id and u.day = ${day}::date
          where k.account_id = ${accountId} and k.deleted_at is null
          order by k.id limit ${page.limit} offset ${page.offset}`,
        sql<{ total: number }[]>`
          select count(*)::int as total from api_keys where account_id = ${accountId} and deleted_at is null`,
      ]);
      return { rows: rows.map(toKey), total: count!.total };
    },

    /**
     * Deletes a key (its row stays, for the usage and emails it names) and its rate-limit bucket, which nothing
     * reads again. With `accountId`, only that account's key: another account's is as absent as an unknown one,
     * decided in this one statement.
     */
    async softDelete(id: string, accountId?: string): Promise<boolean> {
      const rows = await sql`
        with gone as (
          update api_keys set deleted_at = now()
          where id = ${id} and deleted_at is null ${accountId === undefined ? sql`` : sql`and account_id = ${accountId}`}
          returning id
        ),
        bucket as (delete from rate_buckets where key_id in (select id from gone))
        select id from gone`;
      return rows.length > 0;
    },

    /** Adds counted usage; one statement for many keys. */
    async addUsage(deltas: UsageDelta[]): Promise<void> {
      if (deltas.length === 0) return;
      const rows = deltas.map((d) => [d.keyId, d.requests, d.errors, d.emailsSent]);
      await sql`
        update api_keys k set
          request_count = k.request_count + v.requests::bigint,
          error_count = k.error_count + v.errors::bigint,
          email_sent_count = k.email_sent_count + v.sent::bigint,
          last_used_at = now()
        from (values ${sql(rows as never)}) as v(id, requests, errors, sent)
        where k.id = v.id`;
    },
  };
}
export type ApiKeysRepo = ReturnType<typeof createApiKeysRepo>;
