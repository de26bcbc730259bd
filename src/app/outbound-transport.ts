import type { Config } from '../config.js';
import type { Logger } from '../logger.js';
import { createDirectTransport } from '../mail/direct/direct-transport.js';
import type { DnsResolver } from '../mail/dns-resolver.js';
import { createMailTransport, type MailTransport } from '../mail/transport.js';

/** Connections to the smart host (or the catcher); direct delivery limits connections per MX host instead. */
const RELAY_CONNECTIONS = 8;

/**
 * How mail leaves (MAILER_DELIVERY): one pooled transport to the smart host or the catcher at `smtpUrl`, or
 * direct delivery to each recipient domain's MX hosts, found through `resolver` (MAILER_DNS_SERVERS, the one
 * domain verification uses). Either way EHLO
 * says MAILER_HOSTNAME, and the caller signs and addresses the message the same.
 */
export function createOutboundTransport(config: Config, smtpUrl: string, resolver: DnsResolver, logger: Logger): MailTransport {
  if (config.delivery !== 'direct') return createMailTransport(smtpUrl, { maxConnections: RELAY_CONNECTIONS, name: config.hostname });
  return createDirectTransport({
    resolver,
    port: config.mxPort,
    name: config.hostname,
    allowPrivate: config.mxAllowPrivate,
    logger,
  });
}
