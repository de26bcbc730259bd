import type { AccountStatus, Permission } from '../../domain/catalog.js';
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
  request_count: string;
  error_count: string;
  email_sent_count: string;
};
const toKey = (r: Raw): ApiKeyRow => ({
  id: r.id,
  accountId: r.account_id,
  name: r.name,
  permission: r.permission,
  allowedDomains: r.allowed_domains,
  keyPrefix: r.key_prefix,
  createdAt: r.created_at,
  usage: {
    requestCount: Number(r.request_count),
    errorCount: Number(r.error_count),
    emailSentCount: Number(r.email_sent_count),
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
    }): Promise<ApiKeyRow> {
      const [row] = await sql<Raw[]>`
        insert into api_keys (id, account_id, name, permission, allowed_domains, key_hash, key_prefix)
        values (${k.id}, ${k.accountId}, ${k.name}, ${k.permission}, ${k.allowedDomains}, ${k.keyHash}, ${k.keyPrefix})
        returning *`;
      return toKey(row!);
    },

    async findPrincipal(keyHash: Buffer): Promise<KeyPrincipalRow | undefined> {
      const [row] = await sql<
        {
          id: string;
          key_hash: Buffer;
          account_id: string;
          permission: Permission;
          allowed_domains: string[];
          status: AccountStatus;
          daily_quota: number;
        }[]
      >`
        select k.id, k.key_hash, k.account_id, k.permission, k.allowed_domains, a.status, a.daily_quota
        from api_keys k join accounts a on a.id = k.account_id
        where k.key_hash = ${keyHash} and k.deleted_at is null`;
      return (
        row && {
          keyId: row.id,
          keyHash: row.key_hash,
          accountId: row.account_id,
          permission: row.permission,
          allowedDomains: row.allowed_domains,
          accountStatus: row.status,
          dailyQuota: row.daily_quota,
        }
      );
    },

    async listByAccount(accountId: string): Promise<ApiKeyRow[]> {
      return (
        await sql<Raw[]>`select * from api_keys where account_id = ${accountId} and deleted_at is null order by id`
      ).map(toKey);
    },

    /** Deletes a key (its row stays, for the usage and emails it names) and its rate-limit bucket, which nothing reads again. */
    async softDelete(id: string): Promise<boolean> {
      const rows = await sql`
        with gone as (update api_keys set deleted_at = now() where id = ${id} and deleted_at is null returning id),
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
