import type { DkimKeyStatus } from '../../domain/catalog.js';
import type { Sql } from '../sql.js';
import type { DkimKeyRow } from '../../domain/entities/dkim-keys.js';

export type { DkimKeyStatus };

type Raw = {
  id: string;
  domain_id: string;
  selector: string;
  algorithm: 'rsa';
  public_key: string;
  status: DkimKeyStatus;
  created_at: Date;
  activated_at: Date | null;
};
const toKey = (r: Raw): DkimKeyRow => ({
  id: r.id,
  domainId: r.domain_id,
  selector: r.selector,
  algorithm: r.algorithm,
  publicKey: r.public_key,
  status: r.status,
  createdAt: r.created_at,
  activatedAt: r.activated_at,
});

export function createDkimKeysRepo(sql: Sql) {
  return {
    /**
     * Adds a key; undefined when the domain already has one of that status (or that selector): the unique
     * indexes decide, so processes adding keys at once cannot both succeed.
     */
    async insert(k: {
      id: string;
      domainId: string;
      selector: string;
      publicKey: string;
      privateKeySealed: string;
      status: 'active' | 'pending';
    }): Promise<DkimKeyRow | undefined> {
      const [row] = await sql<Raw[]>`
        insert into dkim_keys (id, domain_id, selector, public_key, private_key_sealed, status, activated_at)
        values (${k.id}, ${k.domainId}, ${k.selector}, ${k.publicKey}, ${k.privateKeySealed}, ${k.status},
                ${k.status === 'active' ? sql`now()` : null})
        on conflict do nothing
        returning id, domain_id, selector, algorithm, public_key, status, created_at, activated_at`;
      return row && toKey(row);
    },

    /** The keys published for these domains: active and pending ones. */
    async listPublished(domainIds: string[]): Promise<DkimKeyRow[]> {
      if (domainIds.length === 0) return [];
      const rows = await sql<Raw[]>`
        select id, domain_id, selector, algorithm, public_key, status, created_at, activated_at from dkim_keys
        where domain_id = any(${domainIds}) and status in ('active', 'pending') order by id`;
      return rows.map(toKey);
    },

    /** Every selector the domain has used, retired ones included (a selector is never reused). */
    async selectors(domainId: string): Promise<string[]> {
      return (await sql<{ selector: string }[]>`select selector from dkim_keys where domain_id = ${domainId}`).map(
        (r) => r.selector,
      );
    },

    /**
     * A rotation's pending key becomes the active one, the active one retired (it stops signing now, not
     * before: its record is published until the owner removes it). False when the key is no longer pending.
     */
    async promote(domainId: string, keyId: string): Promise<boolean> {
      return sql.begin(async (tx) => {
        const [pending] =
          await tx`select 1 from dkim_keys where id = ${keyId} and domain_id = ${domainId} and status = 'pending' for update`;
        if (!pending) return false;
        await tx`update dkim_keys set status = 'retired', retired_at = now() where domain_id = ${domainId} and status = 'active'`;
        await tx`update dkim_keys set status = 'active', activated_at = now() where id = ${keyId}`;
        return true;
      }) as Promise<boolean>;
    },

    /** The sealed private key that signs mail from this account's domain: its active key. */
    async sealedSigningKey(
      accountId: string,
      domainName: string,
    ): Promise<{ domainName: string; keyId: string; selector: string; sealed: string } | undefined> {
      const [row] = await sql<{ name: string; id: string; selector: string; private_key_sealed: string }[]>`
        select d.name, k.id, k.selector, k.private_key_sealed from domains d join dkim_keys k on k.domain_id = d.id and k.status = 'active'
        where d.account_id = ${accountId} and d.name = ${domainName}`;
      return row && { domainName: row.name, keyId: row.id, selector: row.selector, sealed: row.private_key_sealed };
    },

    /** The keys sealed before sealed values were bound to their row (key-box.ts format kb1): the start re-seals them. */
    async unboundPrivateKeys(): Promise<{ id: string; sealed: string }[]> {
      return sql<{ id: string; sealed: string }[]>`
        select id, private_key_sealed as sealed from dkim_keys where split_part(private_key_sealed, '.', 1) = 'kb1' order by id`;
    },

    /** Replaces a key's sealed private key, if it is still `from` (a process re-sealing it at once wins alone). */
    async replaceSealed(id: string, from: string, to: string): Promise<void> {
      await sql`update dkim_keys set private_key_sealed = ${to} where id = ${id} and private_key_sealed = ${from}`;
    },

    /** The selector of the domain's active key (the one that signs), if it has one. */
    async activeSelector(domainId: string): Promise<string | undefined> {
      const [row] = await sql<
        { selector: string }[]
      >`select selector from dkim_keys where domain_id = ${domainId} and status = 'active'`;
      return row?.selector;
    },

    /** The ids of the encryption keys the stored private keys are sealed under (key-box.ts format). */
    async sealingKeyIds(): Promise<string[]> {
      return (
        await sql<{ id: string }[]>`select distinct split_part(private_key_sealed, '.', 2) as id from dkim_keys`
      ).map((r) => r.id);
    },

    /**
     * Verified domains whose signing key's DKIM record the last DNS check did not find (never checked, or
     * verified with `force`, as the seeded default domain is): up to `limit` names, and how many there are.
     * The status is looked up by the record's key as domain/dns-records.ts names it (`dkim:<record name>`).
     */
    async verifiedWithoutDkimRecord(limit: number): Promise<{ names: string[]; count: number }> {
      const rows = await sql<{ name: string; count: number }[]>`
        select d.name, count(*) over ()::int as count from domains d join dkim_keys k on k.domain_id = d.id and k.status = 'active'
        where d.verified_at is not null
          and coalesce(d.dns_statuses -> ('dkim:' || k.selector || '._domainkey.' || d.name) ->> 'status', 'pending') <> 'verified'
        order by d.name limit ${limit}`;
      return { names: rows.map((r) => r.name), count: rows[0]?.count ?? 0 };
    },

    /** Domains with no active key (added before keys existed), oldest first. */
    async domainsWithoutKey(limit: number): Promise<{ id: string; name: string }[]> {
      return sql<{ id: string; name: string }[]>`
        select d.id, d.name from domains d
        where not exists (select 1 from dkim_keys k where k.domain_id = d.id and k.status = 'active')
        order by d.id limit ${limit}`;
    },
  };
}
export type DkimKeysRepo = ReturnType<typeof createDkimKeysRepo>;
