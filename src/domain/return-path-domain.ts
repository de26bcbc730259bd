/** The subdomain of a sender domain that is its own return-path domain when MAILER_RETURN_PATH_DOMAIN is unset. */
export const RETURN_PATH_SUBDOMAIN = 'rp';

/**
 * The domain of the envelope sender of mail from `senderDomain`: the one configured for every sender
 * (MAILER_RETURN_PATH_DOMAIN), else `rp.<senderDomain>`, which the domain's owner points (MX) at the
 * inbound listener. Either way SPF is checked against it, and it aligns with the From domain for DMARC
 * (relaxed alignment) only in the second case.
 */
export function returnPathDomain(senderDomain: string, configured: string | undefined): string {
  return configured ?? `${RETURN_PATH_SUBDOMAIN}.${senderDomain}`;
}
