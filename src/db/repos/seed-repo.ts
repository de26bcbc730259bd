import type { Tx } from '../sql.js';

/** First-run seeding, inside the migration transaction (so exactly one starting process does it). */
export function createSeedRepo(sql: Tx) {
  return {
    async isEmpty(): Promise<boolean> {
      const [row] = await sql`select 1 from accounts limit 1`;
      return !row;
    },

    async seed(s: {
      account: { id: string; name: string; dailyQuota: number };
      domain: { id: string; name: string; verificationToken: string };
      key: { id: string; name: string; keyHash: Buffer; keyPrefix: string };
    }): Promise<void> {
      await sql`insert into accounts (id, name, daily_quota) values (${s.account.id}, ${s.account.name}, ${s.account.dailyQuota})`;
      await sql`
        insert into domains (id, account_id, name, verification_token, verified_at)
        values (${s.domain.id}, ${s.account.id}, ${s.domain.name}, ${s.domain.verificationToken}, now())`;
      await sql`
        insert into api_keys (id, account_id, name, permission, key_hash, key_prefix)
        values (${s.key.id}, ${s.account.id}, ${s.key.name}, 'all', ${s.key.keyHash}, ${s.key.keyPrefix})`;
    },
  };
}
