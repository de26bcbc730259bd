import type { Config } from '../config.js';
import type { Logger } from '../logger.js';
import type { EgressRepo } from '../db/index.js';
import { createEgressRulesSource } from '../delivery/egress/rules-source.js';
import { createEgressShaper } from '../delivery/egress/shaper.js';
import { createDirectTransport } from '../delivery/transport/direct/direct-transport.js';
import type { EgressShaper } from '../domain/entities/egress.js';
import { createCachingResolver } from '../net/caching-resolver.js';
import { createMtaStsPolicies } from '../net/mta-sts.js';
import { createMailTransport, type MailTransport } from '../delivery/transport/transport.js';

/**
 * Connections to the smart host (or the catcher); direct delivery limits connections per destination site instead.
 * Each SMTP transaction is four round trips, so a connection spends most of its time waiting for the server
 * and for its turn on a busy machine: 8 connections left the cores partly idle while the queue drained
 * (docs/benchmark.md, "Figures behind the code's choices"). It is also the bound on the duplicates a crashed
 * worker can cause (docs/delivery.md, the duplicate window): 32 sends in flight per activity instead of 16
 * gained nothing more and let a crash duplicate more than one message per connection (outcomes waiting for
 * their commit; docs/benchmark.md, "Tried in session 7 and not kept").
 */
export const RELAY_CONNECTIONS = 16;

export interface OutboundTransport {
  transport: MailTransport;
  /** Direct mode's egress shaper (undefined in relay and catcher modes, which are not shaped). */
  shaper: EgressShaper | undefined;
  /** Closes the connections, then (direct mode) stops watching the rules file and writes the shaper's last state. */
  close(): Promise<void>;
}

export interface OutboundDeps {
  /** Direct mode: egress shaping's shared state (egress_sites, egress_warmup_usage). */
  egressRepo: EgressRepo;
  logger: Logger;
}

/**
 * How mail leaves (MAILER_DELIVERY): one pooled transport to the smart host or the catcher at `smtpUrl`, or
 * direct delivery to each recipient domain's MX hosts. Direct delivery resolves through its own MX cache over
 * MAILER_DNS_SERVERS (net/caching-resolver.ts; domain verification keeps the uncached resolver, so a customer
 * fixing a record sees it at once), applies recipient domains' MTA-STS policies (MAILER_MTA_STS) and is shaped
 * by the egress rules (MAILER_EGRESS_RULES, MAILER_EGRESS_POOLS; docs/deliverability.md). Either way EHLO says
 * MAILER_HOSTNAME (or a pool's source name), and the caller signs and addresses the message the same.
 */
export function createOutboundTransport(config: Config, smtpUrl: string, deps: OutboundDeps): OutboundTransport {
  const { logger } = deps;
  if (config.delivery !== 'direct') {
    const transport = createMailTransport(smtpUrl, { maxConnections: RELAY_CONNECTIONS, name: config.hostname });
    return { transport, shaper: undefined, close: async () => transport.close() };
  }
  const resolver = createCachingResolver(config.dnsServers);
  const rules = createEgressRulesSource({
    path: config.egressRules,
    poolsSetting: config.egressPools,
    defaultEhlo: config.hostname,
    logger,
  });
  const shaper = createEgressShaper({ rules, repo: deps.egressRepo, logger });
  const mtaSts = config.mtaSts
    ? createMtaStsPolicies({ resolver, port: config.mtaStsPort, logger, allowPrivate: config.mxAllowPrivate })
    : undefined;
  const transport = createDirectTransport({
    resolver,
    port: config.mxPort,
    name: config.hostname,
    allowPrivate: config.mxAllowPrivate,
    logger,
    shaper,
    mtaSts,
  });
  return {
    transport,
    shaper,
    async close() {
      transport.close();
      rules.close();
      await shaper.close();
    },
  };
}
