import { redactAddresses, redactJson } from '../../domain/erasure.js';
import { jsonb, type Sql } from '../sql.js';
import type { JsonObject } from '../../domain/json.js';
import { addressDigest } from './address-digest.js';
import type { ScannedChunk } from '../../domain/entities/erasure.js';

const ofAccount = (sql: Sql, accountId: string | undefined) =>
  accountId === undefined ? sql`` : sql`and account_id = ${accountId}`;

/**
 * The statements of an address's erasure outside the emails (erasure-repo.ts): scheduled emails, caught
 * mail, suppressions and Idempotency-Key answers. `key` is the address in lower case.
 */
export function createErasureTracesRepo(sql: Sql) {
  return {
    /** The next `limit` scheduled emails after `after` in id order; hits: those whose addresses or draft mention the address. */
    async scanScheduled(
      key: string,
      accountId: string | undefined,
      after: string,
      limit: number,
    ): Promise<ScannedChunk> {
      const [r] = await sql<{ last: string | null; hits: string[] }[]>`
        with scanned as (
          select id, from_address, to_addresses, draft from scheduled_emails where id > ${after} ${ofAccount(sql, accountId)}
          order by id limit ${limit})
        select (select max(id) from scanned) as last, array(
          select id from scanned
          where lower(from_address) = ${key} or exists (select 1 from unnest(to_addresses) a where lower(a) = ${key})
            or strpos(lower(draft::text), ${key}) > 0
          order by id) as hits`;
      return { last: r?.last ?? undefined, hits: r?.hits ?? [] };
    },

    /** Rewrites those scheduled emails without the address and without their content; enqueued ones are left (and counted). */
    async redactScheduled(
      ids: string[],
      address: string,
    ): Promise<{ scheduledEmails: number; attachments: number; skippedPending: number }> {
      return sql.begin(async (tx) => {
        const rows = await tx<
          { id: string; status: string; draft: JsonObject; from_address: string; to_addresses: string[] }[]
        >`
          select id, status, draft, from_address, to_addresses from scheduled_emails where id = any(${ids}) order by id for update`;
        const done = rows.filter((r) => r.status !== 'enqueued');
        if (done.length > 0) {
          const redacted = done.map((r) => ({
            id: r.id,
            draft: { ...redactJson(r.draft, address), subject: '', html: '', text: '', headers: {}, tags: {} },
            from_address: redactAddresses([r.from_address], address)[0],
            to_addresses: redactAddresses(r.to_addresses, address),
          }));
          await tx`
            update scheduled_emails s set draft = r.draft, from_address = r.from_address, to_addresses = r.to_addresses, subject = '',
              content_expired_at = now()
            from jsonb_to_recordset(${jsonb(tx, redacted)}) as r(id text, draft jsonb, from_address text, to_addresses text[])
            where s.id = r.id`;
        }
        const dropped =
          done.length === 0
            ? []
            : await tx`delete from attachments where owner_id = any(${done.map((r) => r.id)}) returning 1`;
        return { scheduledEmails: done.length, attachments: dropped.length, skippedPending: rows.length - done.length };
      }) as Promise<{ scheduledEmails: number; attachments: number; skippedPending: number }>;
    },

    /** Deletes the next `limit` caught messages after `after` sent from or to the address; answers where the scan got and their files. */
    async deleteCaught(
      key: string,
      after: string,
      limit: number,
    ): Promise<{ last: string | undefined; deleted: number; paths: string[] }> {
      const [r] = await sql<{ last: string | null; paths: string[] | null; deleted: number }[]>`
        with scanned as (
          select id, envelope_from, envelope_to from caught_messages where id > ${after} order by id limit ${limit}),
        gone as (
          delete from caught_messages where id in (
            select id from scanned where lower(envelope_from) = ${key} or exists (select 1 from unnest(envelope_to) a where lower(a) = ${key}))
          returning path)
        select (select max(id) from scanned) as last, (select count(*) from gone)::int as deleted, array(select path from gone where path <> '') as paths`;
      return { last: r?.last ?? undefined, deleted: r?.deleted ?? 0, paths: r?.paths ?? [] };
    },

    /**
     * The account's (or every account's) suppression of the address kept as its digest (address-digest.ts):
     * the send path still refuses the address. Where a digest of it is there already (erased before) with the
     * same scope and topic, the plain row just goes. The salt must exist (erasure-service makes it first).
     */
    async hashSuppressions(key: string, accountId: string | undefined): Promise<number> {
      const digest = addressDigest(sql, key);
      const [r] = await sql<{ n: number }[]>`
        with hashed as (
          update suppressions s set address = ${digest}
          where s.address = ${key} ${ofAccount(sql, accountId)}
            and not exists (select 1 from suppressions h where h.account_id = s.account_id and h.address = ${digest}
              and h.scope = s.scope and h.topic = s.topic)
          returning 1),
        dropped as (
          delete from suppressions s
          where s.address = ${key} ${ofAccount(sql, accountId)}
            and exists (select 1 from suppressions h where h.account_id = s.account_id and h.address = ${digest}
              and h.scope = s.scope and h.topic = s.topic)
          returning 1)
        select ((select count(*) from hashed) + (select count(*) from dropped))::int as n`;
      return r?.n ?? 0;
    },

    /** Deletes the Idempotency-Key records whose stored answer mentions the address (a replay would show it again). */
    async dropIdempotencyKeys(key: string, accountId: string | undefined): Promise<number> {
      const rows =
        await sql`delete from idempotency_keys where strpos(lower(response::text), ${key}) > 0 ${ofAccount(sql, accountId)} returning 1`;
      return rows.length;
    },
  };
}
export type ErasureTracesRepo = ReturnType<typeof createErasureTracesRepo>;
