import type { Sql } from '../sql.js';

export interface WebhookRow {
  id: string;
  accountId: string;
  url: string;
  events: string[];
  secret: string;
  createdAt: Date;
}

type Raw = { id: string; account_id: string; url: string; events: string[]; secret: string; created_at: Date };
const toWebhook = (r: Raw): WebhookRow => ({ id: r.id, accountId: r.account_id, url: r.url, events: r.events, secret: r.secret, createdAt: r.created_at });

export function createWebhooksRepo(sql: Sql) {
  return {
    async create(w: { id: string; accountId: string; url: string; events: string[]; secret: string }): Promise<WebhookRow> {
      const [row] = await sql<Raw[]>`
        insert into webhooks (id, account_id, url, events, secret)
        values (${w.id}, ${w.accountId}, ${w.url}, ${w.events}, ${w.secret}) returning *`;
      return toWebhook(row!);
    },

    async get(id: string): Promise<WebhookRow | undefined> {
      const [row] = await sql<Raw[]>`select * from webhooks where id = ${id} and deleted_at is null`;
      return row && toWebhook(row);
    },

    async listByAccount(accountId: string): Promise<WebhookRow[]> {
      return (await sql<Raw[]>`select * from webhooks where account_id = ${accountId} and deleted_at is null order by id`).map(toWebhook);
    },

    async softDelete(id: string): Promise<boolean> {
      const rows = await sql`update webhooks set deleted_at = now() where id = ${id} and deleted_at is null returning id`;
      return rows.length > 0;
    },
  };
}
export type WebhooksRepo = ReturnType<typeof createWebhooksRepo>;
