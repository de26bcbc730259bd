import type { SmtpFailure } from '../smtp-outcome.js';

/**
 * The failures direct delivery decides before any server answers, worded as a DSN would word them
 * (RFC 3463 status codes) so that a bounce or a retry reads the same as one a server caused.
 */

/** RFC 7505: a lone `0 .` MX says the domain takes no mail at all. */
export const nullMx = (domain: string): SmtpFailure => ({
  kind: 'hard',
  code: 556,
  status: '5.1.10',
  diagnostic: `556 5.1.10 ${domain} does not accept mail (null MX, RFC 7505)`,
});

/** No MX and no address: the domain does not exist or has no mail host. */
export const noMailHost = (domain: string): SmtpFailure => ({
  kind: 'hard',
  code: 550,
  status: '5.1.2',
  diagnostic: `550 5.1.2 ${domain} has no MX record and no address (domain not found)`,
});

/** MX records that name hosts without any address: nowhere to deliver to. */
export const unroutable = (domain: string, hosts: string[]): SmtpFailure => ({
  kind: 'hard',
  code: 550,
  status: '5.4.4',
  diagnostic: `550 5.4.4 the MX hosts of ${domain} (${hosts.join(', ')}) have no address`,
});

/** The resolver itself failed: the answer may well be different in a minute. */
export const dnsFailure = (name: string, type: string, err: unknown): SmtpFailure => ({
  kind: 'soft',
  code: 0,
  status: '4.4.3',
  diagnostic: `DNS lookup of ${type} ${name} failed: ${(err as Error).message ?? String(err)}`.slice(0, 1000),
});

/** A target the service will not connect to; it counts as an unreachable host. */
export const privateTarget = (host: string, address: string): SmtpFailure => ({
  kind: 'soft',
  code: 0,
  status: '4.4.1',
  diagnostic: `MX host ${host} resolves to ${address}, a private or loopback address: not connected to`,
});

/** An address that has no domain part cannot be routed at all. */
export const noDomain = (address: string): SmtpFailure => ({
  kind: 'hard',
  code: 553,
  status: '5.1.3',
  diagnostic: `553 5.1.3 ${address} has no domain to deliver to`,
});
