/**
 * Sender authentication per domain: DKIM keys and the state of the last DNS check.
 *
 * `dkim_keys` holds every key a domain has had. `active` signs; `pending` is a rotation's new key, published
 * but not yet found in DNS (it starts signing once it is, and the active one is then `retired`). The
 * partial unique indexes keep at most one of each per domain, which is also what makes the start-time
 * backfill of keys safe when several processes start at once. The private key is sealed (key-box.ts);
 * `public_key` is the base64 SPKI DER published as the record's `p=`.
 *
 * On `domains`: when the records were last looked up, each record's status then (jsonb keyed by purpose and
 * name, see domain/dns-records.ts), and since when a verified domain's required records have been failing.
 */
export const sql = /* sql */ `
CREATE TABLE dkim_keys (
  id text PRIMARY KEY,
  domain_id text NOT NULL REFERENCES domains (id) ON DELETE CASCADE,
  selector text NOT NULL,
  algorithm text NOT NULL DEFAULT 'rsa' CHECK (algorithm IN ('rsa')),
  public_key text NOT NULL,
  private_key_sealed text NOT NULL,
  status text NOT NULL CHECK (status IN ('pending', 'active', 'retired')),
  created_at timestamptz NOT NULL DEFAULT now(),
  activated_at timestamptz,
  retired_at timestamptz,
  UNIQUE (domain_id, selector)
);
CREATE UNIQUE INDEX dkim_keys_one_active ON dkim_keys (domain_id) WHERE status = 'active';
CREATE UNIQUE INDEX dkim_keys_one_pending ON dkim_keys (domain_id) WHERE status = 'pending';

ALTER TABLE domains
  ADD COLUMN dns_checked_at timestamptz,
  ADD COLUMN dns_statuses jsonb NOT NULL DEFAULT '{}',
  ADD COLUMN dns_failing_since timestamptz;
-- The periodic re-check reads verified domains by the age of their last check.
CREATE INDEX domains_dns_recheck ON domains (dns_checked_at NULLS FIRST) WHERE verified_at IS NOT NULL;
`;
