import { hasSqlState, jsonb, type Sql } from '../sql.js';

/**
 * What a request admitted on a cached key claims of it: the key, and the fingerprint it had when this process
 * read it (migration 0038). The statement that stores the request's email confirms it (confirm_principals).
 */
export interface PrincipalClaim {
  keyId: string;
  fingerprint: string;
}

/** What confirm_principals raises when a claimed key is gone, expired or changed: the statement rolled back. */
const CLAIM_REFUSED = 'MQ401';

export const isClaimRefused = (err: unknown): boolean => hasSqlState(err, CLAIM_REFUSED);

/** Claims as confirm_principals takes them: one JSON parameter, each key and fingerprint once. */
export function principalClaims(sql: Sql, claims: PrincipalClaim[]) {
  const distinct = new Map(claims.map((c) => [`${c.keyId} ${c.fingerprint}`, c]));
  return jsonb(
    sql,
    [...distinct.values()].map((c) => ({ key_id: c.keyId, fingerprint: c.fingerprint })),
  );
}
