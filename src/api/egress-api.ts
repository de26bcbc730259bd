import type { MessageInitShape } from '@bufbuild/protobuf';
import type { AdminService } from '../gen/mail/v1/admin_service_pb.js';
import type { EgressSiteSchema, GetEgressStatusResponseSchema } from '../gen/mail/v1/egress_pb.js';
import {
  formatRate,
  type EgressStatus,
  type EgressSiteView,
  type EgressStatusService,
} from '../services/egress-status.js';
import type { CallContext, Handlers } from './call-context.js';

export interface EgressApiDeps {
  egress: EgressStatusService;
}

/** Runs a call once the admin token is admitted. */
type Admit = <T>(ctx: CallContext, run: () => Promise<T>) => Promise<T>;

/** A time as the API writes it: ISO 8601, or empty for none. */
const iso = (at: Date | null): string => (at === null || Number.isNaN(at.getTime()) ? '' : at.toISOString());
/** A time kept as text in the state (a reply's): written the same way whatever its spelling there. */
const instant = (text: string): string => (text === '' ? '' : iso(new Date(text)));

function presentSite(s: EgressSiteView): MessageInitShape<typeof EgressSiteSchema> {
  return {
    site: s.site,
    mx: s.mx,
    connectionLimit: s.shape.connectionLimit,
    messagesPerConnection: s.shape.messagesPerConnection,
    rate: s.shape.rate ? formatRate(s.shape.rate) : '',
    currentRate: s.currentRate ? formatRate(s.currentRate) : '',
    throttledUntil: iso(s.throttledUntil),
    suspendedUntil: iso(s.suspendedUntil),
    suspendedSources: s.suspendedSources.map((x) => ({ address: x.address, until: iso(x.until) })),
    connections: s.connections,
    attemptsLastMinute: s.attemptsLastMinute,
    lastReplies: s.lastReplies.map((r) => ({ ...r, at: instant(r.at) })),
    updatedAt: iso(s.updatedAt),
  };
}

function presentStatus(s: EgressStatus): MessageInitShape<typeof GetEgressStatusResponseSchema> {
  return {
    rules: s.rules,
    sites: s.sites.map(presentSite),
    pools: s.pools.map((p) => ({
      name: p.name,
      streams: p.streams,
      accounts: p.accounts,
      sources: p.sources.map((x) => ({
        address: x.address,
        ehlo: x.ehlo,
        warmupLimitToday: x.warmupLimitToday ?? -1,
        sentToday: x.sentToday,
      })),
    })),
  };
}

/** Egress shaping for the operator (mail.v1.AdminService): the sites' state and pools, and lifting a site's suspension. */
export function adminEgressCalls(
  deps: EgressApiDeps,
  admin: Admit,
): Pick<Handlers<typeof AdminService>, 'getEgressStatus' | 'resumeEgressSite'> {
  return {
    getEgressStatus: (_req, ctx) => admin(ctx, async () => presentStatus(await deps.egress.status())),
    resumeEgressSite: (req, ctx) => admin(ctx, async () => presentSite(await deps.egress.resume(req.site))),
  };
}
