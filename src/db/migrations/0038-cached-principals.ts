/**
 * An immediate send's API key read from the API process's cache, confirmed by the statement that stores the
 * email (issue 30; services/auth-service.ts, authenticateCached). Every request read its key afresh, one
 * statement and round trip before the accept's own, so that a deleted key, an expired one or a changed
 * account counts from the very next request in every process. An immediate send now uses what the process
 * read before and names it in its accept statement as a claim, {key_id, fingerprint}: this function raises
 * MQ401 unless each claimed key is still live (not deleted, not expired) with the same fingerprint, and the
 * whole statement rolls back; the API then reads the key afresh and answers, or runs the send again, by what
 * it is now. The promise is the same, judged by the statement that commits the email instead of one before it.
 *
 * The fingerprint covers everything of the key and its account a send is judged by (permission, allowed
 * domains, rate limit, quotas, expiry, account status): the same expression when the key is read and when it
 * is confirmed. The expiry goes in as epoch seconds, so that the session's TimeZone cannot change the text.
 */
export const sql = /* sql */ `
CREATE FUNCTION principal_fingerprint(k api_keys, a accounts) RETURNS text LANGUAGE sql STABLE AS $$
  SELECT md5(row(k.account_id, k.permission, k.allowed_domains, k.rate_limit, k.daily_quota,
    extract(epoch FROM k.expires_at), a.status, a.daily_quota)::text)
$$;

CREATE FUNCTION confirm_principals(claims jsonb) RETURNS integer LANGUAGE plpgsql AS $$
BEGIN
  IF EXISTS (
    SELECT 1 FROM jsonb_to_recordset(claims) AS c(key_id text, fingerprint text)
    WHERE NOT EXISTS (
      SELECT 1 FROM api_keys k JOIN accounts a ON a.id = k.account_id
      WHERE k.id = c.key_id AND k.deleted_at IS NULL
        AND (k.expires_at IS NULL OR k.expires_at > now())
        AND principal_fingerprint(k, a) = c.fingerprint)
  ) THEN
    RAISE EXCEPTION 'an API key or its account changed since this process read it' USING ERRCODE = 'MQ401';
  END IF;
  RETURN jsonb_array_length(claims);
END $$;
`;
