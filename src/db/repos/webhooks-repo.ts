import { sealedContext, type SecretBox } from '../../domain/sealed-values.js';
import type { Sql } from '../sql.js';
import type { WebhookRow } from '../../domain/entities/webhooks.js';

type Raw = {
  id: string;
  account_id: string;
  url: string;
  events: string[];
  secret: string;
  previous_secret: string | null;
  previous_secret_until: Date | null;
  disabled_at: Date | null;
  disabled_reason: string | null;
  created_at: Date;
};
/** The row with its secrets opened: both are stored sealed for their webhook (sealedContext.webhookSecret). */
const toWebhook = (r: Raw, box: SecretBox): WebhookRow => {
  const context = sealedContext.webhookSecret(r.id);
  return {
    id: r.id,
    accountId: r.account_id,
    url: r.url,
    events: r.events,
    secret: box.open(r.secret, context),
    previousSecret: r.previous_secret === null ? null : box.open(r.previous_secret, context),
    previousSecretUntil: r.previous_secret_until,
    disabledAt: r.disabled_at,
    disabledReason: r.disabled_reason,
    createdAt: r.created_at,
  };
};

/** The secrets that sign a request now: the current one, then the previous one while its overlap lasts. */
export function signingSecrets(
  w: Pick<WebhookRow, 'secret' | 'previousSecret' | 'previousSecretUntil'>,
  now = new Date(),
): string[] {
  return w.previousSecret !== null && w.previousSecretUntil !== null && w.previousSecretUntil > now
    ? [w.secret, w.previousSecret]
    : [w.secret];
}

/**
 * Webhooks. Their signing secrets are stored sealed (`box`, the installation's encryption key) for their own
 * row: this repository seals what it writes and opens what it reads, so the rest of the service sees them clear.
 */
export function createWebhooksRepo(sql: Sql, box: SecretBox) {
  const webhook = (r: Raw) => toWebhook(r, box);
  /** `owner`'s rows alone (another account's is as absent as a missing one); any account's when undefined (the operator). */
  const ownedBy = (owner: string | undefined) => (owner === undefined ? sql`` : sql`and account_id = ${owner}`);
  return {
    /**
     * Stores a new webhook unless its account has `max` live ones already (undefined then), counted in the same
     * statement; two creates at the same moment may each see room for one.
     */
    async create(
      w: {
        id: string;
        accountId: string;
        url: string;
        events: string[];
        secret: string;
      },
      max: number,
    ): Promise<WebhookRow | undefined> {
      const [row] = await sql<Raw[]>`
        insert into webhooks (id, account_id, url, events, secret)
        select ${w.id}, ${w.accountId}, ${w.url}, ${w.events}::text[], ${box.seal(w.secret, sealedContext.webhookSecret(w.id))}
        where (select count(*) from webhooks where account_id = ${w.accountId} and deleted_at is null) < ${max}
        returning *`;
      return row && webhook(row);
    },

    async get(id: string, owner?: string): Promise<WebhookRow | undefined> {
      const [row] = await sql<Raw[]>`select * from webhooks where id = ${id} and deleted_at is null ${ownedBy(owner)}`;
      return row && webhook(row);
    },

    /** One page of an account's webhooks, oldest first, and how many it has (a few: count(*) is cheap). */
    async page(accountId: string, limit: number, offset: number): Promise<{ rows: WebhookRow[]; total: number }> {
      const live = sql`account_id = ${accountId} and deleted_at is null`;
      const [rows, [count]] = await Promise.all([
        sql<Raw[]>`select * from webhooks where ${live} order by id limit ${limit} offset ${offset}`,
        sql<{ n: number }[]>`select count(*)::int as n from webhooks where ${live}`,
      ]);
      return { rows: rows.map(webhook), total: count?.n ?? 0 };
    },

    async softDelete(owner: string | undefined, id: string): Promise<boolean> {
      const rows =
        await sql`update webhooks set deleted_at = now() where id = ${id} and deleted_at is null ${ownedBy(owner)} returning id`;
      return rows.length > 0;
    },

    /**
     * A new secret; the current one keeps signing for `overlapSeconds` more. A rotation during an overlap
     * drops the secret before (two at most sign a request).
     */
    async rotateSecret(
      owner: string | undefined,
      id: string,
      secret: string,
      overlapSeconds: number,
    ): Promise<WebhookRow | undefined> {
      // The current secret moves to previous_secret as it is: both columns are sealed for the same context.
      const [row] = await sql<Raw[]>`
        update webhooks set previous_secret = secret, secret = ${box.seal(secret, sealedContext.webhookSecret(id))},
          previous_secret_until = now() + make_interval(secs => ${overlapSeconds})
        where id = ${id} and deleted_at is null ${ownedBy(owner)} returning *`;
      return row && webhook(row);
    },

    /** Ends a disable: deliveries are attempted again, and the failure count starts from zero. */
    async enable(owner: string | undefined, id: string): Promise<WebhookRow | undefined> {
      const [row] = await sql<Raw[]>`
        update webhooks set disabled_at = null, disabled_reason = null, consecutive_discards = 0, failing_since = null
        where id = ${id} and deleted_at is null ${ownedBy(owner)} returning *`;
      return row && webhook(row);
    },

    /**
     * Seals the secrets stored in clear before they were sealed (deleted webhooks' too); answers how many rows
     * it sealed. Run at start, before anything reads them. Each row is replaced only if still as read, so
     * processes starting at once seal it once.
     */
    async sealClearSecrets(): Promise<number> {
      const rows = await sql<{ id: string; secret: string; previous_secret: string | null }[]>`
        select id, secret, previous_secret from webhooks order by id`;
      let sealed = 0;
      for (const r of rows) {
        const clear = (v: string | null) => v !== null && !box.isBound(v);
        if (!clear(r.secret) && !clear(r.previous_secret)) continue;
        const seal = (v: string | null) =>
          v === null || !clear(v) ? v : box.seal(v, sealedContext.webhookSecret(r.id));
        const done = await sql`
          update webhooks set secret = ${seal(r.secret)}, previous_secret = ${seal(r.previous_secret)}
          where id = ${r.id} and secret = ${r.secret} and previous_secret is not distinct from ${r.previous_secret} returning id`;
        sealed += done.length;
      }
      return sealed;
    },
  };
}
export type WebhooksRepo = ReturnType<typeof createWebhooksRepo>;
