import type {
  EgressContext,
  EgressShaper,
  MtaStsPolicy,
  ObservedReply,
  SourceAddress,
} from '../../../domain/entities/egress.js';
import type { Logger } from '../../../logger.js';
import type { DnsResolver } from '../../../net/dns-resolver.js';
import type { BuiltMessage } from '../send-built.js';
import type { SmtpFailure } from '../smtp-outcome.js';
import { split, type AcceptedRecipient, type FailedRecipient, type MailTransport } from '../transport.js';
import { applyMtaStsPolicy } from './mta-sts-route.js';
import { resolveMxRoute, type MxRoute } from './mx-route.js';
import { chunk, groupByDomain, MAX_RECIPIENTS_PER_TRANSACTION } from './recipient-domains.js';
import { noDomain } from './route-failures.js';
import { createSitePools, type SitePools, type TlsPolicy } from './site-pool.js';
import { attemptTarget } from './target-attempt.js';

export interface DirectTransportOptions {
  /** MX, A and AAAA lookups (MAILER_DNS_SERVERS); the system resolver is never asked. */
  resolver: DnsResolver;
  /** The port of every MX (MAILER_MX_PORT, 25). */
  port: number;
  /** The EHLO name (MAILER_HOSTNAME). */
  name: string;
  /**
   * Egress shaping (delivery/egress/shaper.ts): sites, their connection limits and rates, source-address pools,
   * reply-driven rules. Without one, each MX host is a site of `maxConnectionsPerHost` connections, unbound.
   */
  shaper?: EgressShaper;
  /** MTA-STS policies of recipient domains (net/mta-sts.ts); without it, none (opportunistic TLS everywhere). */
  mtaSts?: { policyFor(domain: string): Promise<MtaStsPolicy | null> };
  /** Without a shaper: simultaneous connections to one MX host (its site). Default 3. */
  maxConnectionsPerHost?: number;
  /** Connect to loopback, private and link-local addresses too; otherwise such MX targets count as unreachable. */
  allowPrivate: boolean;
  logger: Pick<Logger, 'info' | 'warn'>;
  /** An idle connection is closed after this long. Default 30 s. */
  idleMs?: number;
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

/** Where and how one transaction goes: the site, the source address it leaves from, the TLS required. */
interface Path {
  domain: string;
  site: string;
  source: SourceAddress | null;
  tls: TlsPolicy;
}

/** A reply for the shaper: a failure as classified, or the server's success line. */
const asReply = (failure: SmtpFailure): ObservedReply => ({
  code: failure.code,
  status: failure.status,
  diagnostic: failure.diagnostic,
});

/** The shaper's `bounce`: a temporary reply taken as final for the recipients it was about. */
const bounced = (reply: ObservedReply): SmtpFailure => ({
  kind: 'hard',
  code: reply.code,
  status: reply.status.startsWith('4.') ? `5${reply.status.slice(1)}` : reply.status || '5.0.0',
  diagnostic: reply.diagnostic,
});

/**
 * One transaction tried at each MX address in turn until one settles it. When none does, the recipients
 * wait for a retry with the last temporary failure (a permanent refusal at a host's greeting settles them
 * only when no host failed temporarily: that one may take the message later). Every reply goes to the
 * shaper: a `bounce` refuses the transaction's recipients for good, a suspension ends the failover (the
 * other hosts are the same site).
 */
async function deliverTransaction(
  pools: SitePools,
  shaper: EgressShaper | undefined,
  route: MxRoute & { ok: true },
  path: Path,
  message: BuiltMessage,
  recipients: string[],
  logger: DirectTransportOptions['logger'],
): Promise<Outcome> {
  const failures = [...route.skipped];
  for (const target of route.targets) {
    const attempt = await attemptTarget(pools, { ...path, target }, message, recipients);
    if (!attempt.done && attempt.failure.held) return failAll(recipients, attempt.failure);
    const reply = attempt.done ? attempt.reply : asReply(attempt.failure);
    const action = shaper?.observe(path.site, path.source, reply, attempt.done && attempt.ok) ?? null;
    if (action?.kind === 'bounce') {
      const refused = attempt.done ? attempt.failed.map((f) => f.address) : recipients;
      const kept = attempt.done ? attempt.accepted : [];
      return merge([{ accepted: kept, failed: [] }, failAll(refused, bounced(reply))]);
    }
    if (attempt.done) return attempt;
    logger.info(
      { mx: target.exchange, address: target.address, failure: attempt.failure.diagnostic },
      'direct delivery: MX host failed; trying the next',
    );
    failures.push(attempt.failure);
    if (action?.kind === 'suspend' || action?.kind === 'suspend-source') break;
  }
  const soft = failures.filter((f) => f.kind === 'soft');
  return failAll(recipients, (soft[soft.length - 1] ?? failures[failures.length - 1]) as SmtpFailure);
}

/** A deferral of egress shaping itself (nothing was sent): retried later, like a 4xx. */
const shapingDeferral = (diagnostic: string): SmtpFailure => ({ kind: 'soft', code: 0, status: '4.4.5', diagnostic });

/** The distinct MX host names of a route, most preferred first: what a site is recognised by. */
const hostsOf = (route: MxRoute & { ok: true }): string[] => [...new Set(route.targets.map((t) => t.exchange))];

/**
 * Direct delivery (MAILER_DELIVERY=direct): each recipient domain's mail goes to that domain's own MX hosts,
 * domains in parallel, each domain's recipients in one transaction (more than 100 in several). Every envelope
 * recipient ends accepted (with the reply of the MX that took it), refused or deferred; `send` rejects only
 * on a fault of the service itself.
 */
export function createDirectTransport(options: DirectTransportOptions): MailTransport {
  const { shaper, logger } = options;
  const unshaped = { connectionLimit: options.maxConnectionsPerHost ?? 3, messagesPerConnection: 100 };
  const pools = createSitePools({
    port: options.port,
    name: options.name,
    idleMs: options.idleMs ?? 30_000,
    shapeOf: (site) => (shaper ? shaper.shapeOf(site) : unshaped),
    connectionsChanged: shaper ? (site, delta) => shaper.connectionsChanged(site, delta) : undefined,
    logger,
  });
  const routeOptions = { resolver: options.resolver, allowPrivate: options.allowPrivate, random: options.random };

  const policyOf = async (domain: string): Promise<MtaStsPolicy | null> => {
    if (!options.mtaSts) return null;
    try {
      return await options.mtaSts.policyFor(domain);
    } catch (err) {
      // The cache answers failures with null itself; a fault here must not fail the domain's mail.
      logger.warn({ domain, err: (err as Error).message }, 'direct delivery: MTA-STS policy lookup failed');
      return null;
    }
  };

  /** The first source (in the pool's order) the shaper admits a transaction from, or the last deferral. */
  const admit = async (
    site: string,
    sources: (SourceAddress | null)[],
    count: number,
  ): Promise<{ source: SourceAddress | null } | { deferral: string }> => {
    if (!shaper) return { source: null };
    let deferral = '';
    for (const source of sources) {
      const admission = await shaper.admit(site, source, count);
      if (admission.ok) return { source };
      deferral = admission.deferral;
    }
    return { deferral };
  };

  const deliverDomain = async (
    domain: string,
    recipients: string[],
    message: BuiltMessage,
    context: EgressContext | undefined,
  ): Promise<Outcome> => {
    if (domain === '') return merge(recipients.map((r) => failAll([r], noDomain(r))));
    const [resolved, policy] = await Promise.all([resolveMxRoute(domain, routeOptions), policyOf(domain)]);
    const sts = applyMtaStsPolicy(resolved, policy, domain);
    if (sts.report) logger.warn({ domain, report: sts.report }, 'direct delivery: MTA-STS testing policy not met');
    const { route } = sts;
    if (!route.ok) return failAll(recipients, route.failure);
    const hosts = hostsOf(route);
    const site = shaper ? shaper.siteOf(hosts) : (hosts[0] as string);
    const pool = shaper && context ? shaper.sourcesFor(context) : [];
    const sources: (SourceAddress | null)[] = pool.length > 0 ? pool : [null];
    const tls: TlsPolicy = sts.requireVerifiedTls ? 'verified' : 'opportunistic';
    const transactions = chunk(recipients, MAX_RECIPIENTS_PER_TRANSACTION);
    return merge(
      await Promise.all(
        transactions.map(async (part) => {
          const admitted = await admit(site, sources, part.length);
          if ('deferral' in admitted) return failAll(part, shapingDeferral(admitted.deferral));
          const path: Path = { domain, site, source: admitted.source, tls };
          return deliverTransaction(pools, shaper, route, path, message, part, logger);
        }),
      ),
    );
  };

  return {
    async send(message, context) {
      // Every domain's transaction sends the same bytes, so the same Message-ID.
      const groups = groupByDomain(message.envelope.to);
      const outcome = merge(
        await Promise.all(
          [...groups].map(([domain, recipients]) => deliverDomain(domain, recipients, message, context)),
        ),
      );
      return { messageId: message.messageId, accepted: outcome.accepted, ...split(outcome.failed) };
    },
    close: () => pools.close(),
  };
}
