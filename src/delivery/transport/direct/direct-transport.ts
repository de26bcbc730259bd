import type { Logger } from '../../../logger.js';
import type { DnsResolver } from '../../../net/dns-resolver.js';
import type { BuiltMessage } from '../send-built.js';
import type { SmtpFailure } from '../smtp-outcome.js';
import { split, type AcceptedRecipient, type FailedRecipient, type MailTransport } from '../transport.js';
import { createHostPools, type HostPools } from './host-pool.js';
import { resolveMxRoute, type MxRoute } from './mx-route.js';
import { chunk, groupByDomain, MAX_RECIPIENTS_PER_TRANSACTION } from './recipient-domains.js';
import { noDomain } from './route-failures.js';
import { attemptTarget } from './target-attempt.js';

export interface DirectTransportOptions {
  /** MX, A and AAAA lookups (MAILER_DNS_SERVERS); the system resolver is never asked. */
  resolver: DnsResolver;
  /** The port of every MX (MAILER_MX_PORT, 25). */
  port: number;
  /** The EHLO name (MAILER_HOSTNAME). */
  name: string;
  /** Simultaneous connections to one destination address. Default 3. */
  maxConnectionsPerHost?: number;
  /** Connect to loopback, private and link-local addresses too; otherwise such MX targets count as unreachable. */
  allowPrivate: boolean;
  logger: Pick<Logger, 'info' | 'warn'>;
  /** An idle connection or host pool is closed after this long. Default 30 s. */
  idleMs?: number;
  /** Host pools kept at once. Default 200. */
  maxPools?: number;
  /** Order among MX records of equal preference (tests make it fixed). */
  random?: () => number;
}

/** Recipients answered for, before they are sorted into refused and deferred. */
interface Outcome {
  accepted: AcceptedRecipient[];
  failed: FailedRecipient[];
}

const failAll = (recipients: string[], failure: SmtpFailure): Outcome => ({
  accepted: [],
  failed: recipients.map((address) => ({ address, failure })),
});
const merge = (outcomes: Outcome[]): Outcome => ({
  accepted: outcomes.flatMap((o) => o.accepted),
  failed: outcomes.flatMap((o) => o.failed),
});

/**
 * One transaction tried at each MX address in turn until one settles it. When none does, the recipients
 * wait for a retry with the last temporary failure (a permanent refusal at a host's greeting settles them
 * only when no host failed temporarily: that one may take the message later).
 */
async function deliverTransaction(
  pools: HostPools,
  route: MxRoute & { ok: true },
  message: BuiltMessage,
  recipients: string[],
  logger: DirectTransportOptions['logger'],
): Promise<Outcome> {
  const failures = [...route.skipped];
  for (const target of route.targets) {
    const attempt = await attemptTarget(pools, target, message, recipients);
    if (attempt.done) return attempt;
    logger.info(
      { mx: target.exchange, address: target.address, failure: attempt.failure.diagnostic },
      'direct delivery: MX host failed; trying the next',
    );
    failures.push(attempt.failure);
  }
  const soft = failures.filter((f) => f.kind === 'soft');
  return failAll(recipients, (soft[soft.length - 1] ?? failures[failures.length - 1]) as SmtpFailure);
}

/**
 * Direct delivery (MAILER_DELIVERY=direct): each recipient domain's mail goes to that domain's own MX hosts,
 * domains in parallel, each domain's recipients in one transaction (more than 100 in several). Every envelope
 * recipient ends accepted (with the reply of the MX that took it), refused or deferred; `send` rejects only
 * on a fault of the service itself.
 */
export function createDirectTransport(options: DirectTransportOptions): MailTransport {
  const pools = createHostPools({
    port: options.port,
    name: options.name,
    maxConnectionsPerHost: options.maxConnectionsPerHost ?? 3,
    idleMs: options.idleMs ?? 30_000,
    maxPools: options.maxPools ?? 200,
    logger: options.logger,
  });
  const routeOptions = { resolver: options.resolver, allowPrivate: options.allowPrivate, random: options.random };

  const deliverDomain = async (domain: string, recipients: string[], message: BuiltMessage): Promise<Outcome> => {
    if (domain === '') return merge(recipients.map((r) => failAll([r], noDomain(r))));
    const route = await resolveMxRoute(domain, routeOptions);
    if (!route.ok) return failAll(recipients, route.failure);
    const transactions = chunk(recipients, MAX_RECIPIENTS_PER_TRANSACTION);
    return merge(
      await Promise.all(transactions.map((part) => deliverTransaction(pools, route, message, part, options.logger))),
    );
  };

  return {
    async send(message) {
      // Every domain's transaction sends the same bytes, so the same Message-ID.
      const groups = groupByDomain(message.envelope.to);
      const outcome = merge(
        await Promise.all([...groups].map(([domain, recipients]) => deliverDomain(domain, recipients, message))),
      );
      return { messageId: message.messageId, accepted: outcome.accepted, ...split(outcome.failed) };
    },
    close: () => pools.close(),
  };
}
