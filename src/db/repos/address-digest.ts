import type postgres from 'postgres';
import type { Sql } from '../sql.js';

/**
 * How a suppression outlives the erasure of its address: the row keeps `sha256:<hex>` of a per-installation
 * salt (the settings row below, made at the first erasure) and the lower-case address, so the send path can
 * still refuse the address (suppressions-repo `matching` compares both forms) while the table no longer
 * holds it, nor a digest that a list of likely addresses could be hashed against without the salt.
 */
export const ADDRESS_DIGEST_SALT = 'address_digest_salt';
export const ADDRESS_DIGEST_PREFIX = 'sha256:';

/** The SQL expression of the digest of `address` (a lower-case address: a parameter or a column); NULL before any erasure. */
export function addressDigest(sql: Sql, address: postgres.PendingQuery<postgres.Row[]> | string) {
  const value = typeof address === 'string' ? sql`${address}::text` : address;
  return sql`(${ADDRESS_DIGEST_PREFIX} || encode(sha256(convert_to(
    (select value from settings where name = ${ADDRESS_DIGEST_SALT}) || ${value}, 'UTF8')), 'hex'))`;
}
