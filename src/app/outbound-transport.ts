import type { Config } from '../config.js';
import type { Logger } from '../logger.js';
import { createDirectTransport } from '../delivery/transport/direct/direct-transport.js';
import type { DnsResolver } from '../net/dns-resolver.js';
import { createMailTransport, type MailTransport } from '../delivery/transport/transport.js';

/**
 * Connections to the smart host (or the catcher); direct delivery limits connections per MX host instead.
 * Each SMTP transaction is four round trips, so a connection spends most of its time waiting for the server
 * and for its turn on a busy machine: 8 connections left the cores partly idle while the queue drained
 * (docs/benchmark.md, "Figures behind the code's choices"). It is also the bound on the duplicates a crashed
 * worker can cause (docs/delivery.md, the duplicate window): 32 sends in flight per activity instead of 16
 * gained nothing more and let a crash duplicate more than one message per connection (outcomes waiting for
 * their commit; docs/benchmark.md, "Tried in session 7 and not kept").
 */
export const RELAY_CONNECTIONS = 16;

/**
 * How mail leaves (MAILER_DELIVERY): one pooled transport to the smart host or the catcher at `smtpUrl`, or
 * direct delivery to each recipient domain's MX hosts, found through `resolver` (MAILER_DNS_SERVERS, the one
 * domain verification uses). Either way EHLO
 * says MAILER_HOSTNAME, and the caller signs and addresses the message the same.
 */
export function createOutboundTransport(
  config: Config,
  smtpUrl: string,
  resolver: DnsResolver,
  logger: Logger,
): MailTransport {
  if (config.delivery !== 'direct')
    return createMailTransport(smtpUrl, { maxConnections: RELAY_CONNECTIONS, name: config.hostname });
  return createDirectTransport({
    resolver,
    port: config.mxPort,
    name: config.hostname,
    allowPrivate: config.mxAllowPrivate,
    logger,
  });
}
