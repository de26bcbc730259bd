import type { Sql } from '../sql.js';

export interface WebhookRow {
  id: string;
  accountId: string;
  url: string;
  events: string[];
  secret: string;
  /** The secret before the last rotation, and until when it still signs (the overlap). */
  previousSecret: string | null;
  previousSecretUntil: Date | null;
  /** Set when deliveries kept failing past the threshold (or null): nothing is attempted until enabled. */
  disabledAt: Date | null;
  disabledReason: string | null;
  createdAt: Date;
}

type Raw = {
  id: string; account_id: string; url: string; events: string[]; secret: string; previous_secret: string | null;
  previous_secret_until: Date | null; disabled_at: Date | null; disabled_reason: string | null; created_at: Date;
};
const toWebhook = (r: Raw): WebhookRow => ({
  id: r.id, accountId: r.account_id, url: r.url, events: r.events, secret: r.secret, previousSecret: r.previous_secret,
  previousSecretUntil: r.previous_secret_until, disabledAt: r.disabled_at, disabledReason: r.disabled_reason, createdAt: r.created_at,
});

/** The secrets that sign a request now: the current one, then the previous one while its overlap lasts. */
export function signingSecrets(w: Pick<WebhookRow, 'secret' | 'previousSecret' | 'previousSecretUntil'>, now = new Date()): string[] {
  return w.previousSecret !== null && w.previousSecretUntil !== null && w.previousSecretUntil > now ? [w.secret, w.previousSecret] : [w.secret];
}

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

    /**
     * A new secret; the current one keeps signing for `overlapSeconds` more. A rotation during an overlap
     * drops the secret before (two at most sign a request).
     */
    async rotateSecret(id: string, secret: string, overlapSeconds: number): Promise<WebhookRow | undefined> {
      const [row] = await sql<Raw[]>`
        update webhooks set previous_secret = secret, secret = ${secret},
          previous_secret_until = now() + make_interval(secs => ${overlapSeconds})
        where id = ${id} and deleted_at is null returning *`;
      return row && toWebhook(row);
    },

    /** Ends a disable: deliveries are attempted again, and the failure count starts from zero. */
    async enable(id: string): Promise<WebhookRow | undefined> {
      const [row] = await sql<Raw[]>`
        update webhooks set disabled_at = null, disabled_reason = null, consecutive_discards = 0, failing_since = null
        where id = ${id} and deleted_at is null returning *`;
      return row && toWebhook(row);
    },
  };
}
export type WebhooksRepo = ReturnType<typeof createWebhooksRepo>;
