/**
 * Egress shaping (issue 28, docs/deliverability.md): how direct delivery paces itself per destination site and
 * per source address, as KumoMTA's shaping rules, ZoneMTA's sending zones and Postal's IP pools do. These are
 * the shapes the parts agree on: the rules file (delivery/egress/), the connection pools that obey it
 * (delivery/transport/direct/), the state kept in PostgreSQL (migration 32) and the admin API that shows it.
 */

/** A rate: at most `count` messages in every `perMs` milliseconds ("600/min", "10000/h"). */
export interface Rate {
  count: number;
  perMs: number;
}

/** How a site is sent to: simultaneous connections, messages per connection, and a message rate (null: none). */
export interface SiteShape {
  connectionLimit: number;
  messagesPerConnection: number;
  rate: Rate | null;
}

/** What a matching SMTP reply does to the site (or to one source address at that site). */
export type EgressAction =
  /** Lower the site's rate to `rate` for `durationMs`. */
  | { kind: 'throttle'; rate: Rate; durationMs: number }
  /** Send nothing to the site for `durationMs`: every message to it is deferred without a connection. */
  | { kind: 'suspend'; durationMs: number }
  /** Send nothing to the site from the source address that got the reply for `durationMs` (others still may). */
  | { kind: 'suspend-source'; durationMs: number }
  /** The recipients the reply was about bounce now (a temporary reply treated as permanent). */
  | { kind: 'bounce' };

/** An automation rule: an SMTP reply whose text (code, enhanced status and words) matches `pattern` triggers `action`. */
export interface AutomationRule {
  /** The regular expression as written in the rules file (case-insensitive). */
  pattern: string;
  action: EgressAction;
}

/** A named site: the MX host names it groups (glob patterns such as `*.google.com`), its shape and rules. */
export interface SiteRule {
  name: string;
  mx: string[];
  shape: Partial<SiteShape>;
  /** Checked before the rules of every site. */
  automation: AutomationRule[];
}

/** A daily ramp: day 1 (the day of `start`, UTC) may send daily[0] messages, day 2 daily[1]...; after the list, no limit. */
export interface WarmupPlan {
  /** YYYY-MM-DD, UTC. */
  start: string;
  daily: number[];
}

/** A local address outbound connections bind to, with the name it gives in EHLO. */
export interface SourceAddress {
  address: string;
  ehlo: string;
  warmup: WarmupPlan | null;
}

/** A pool of source addresses, used for the emails of its streams or its accounts (an account beats a stream). */
export interface EgressPool {
  name: string;
  sources: SourceAddress[];
  streams: string[];
  accounts: string[];
}

/** How recipients are grouped into sites when no site rule names their MX: by the MX host's parent domain, or by the host itself. */
export type SiteGrouping = 'mx-domain' | 'mx-host';

/** The rules file, parsed and checked. */
export interface EgressRules {
  siteGrouping: SiteGrouping;
  defaults: SiteShape;
  /** Rules of every site, checked after a site's own. */
  automation: AutomationRule[];
  sites: SiteRule[];
  pools: EgressPool[];
}

/** Who an outbound transaction is for: the pool that sends it depends on them. */
export interface EgressContext {
  accountId: string;
  stream: string;
}

/** An SMTP reply as the shaper reads it (a local failure such as a refused connection has code 0). */
export interface ObservedReply {
  code: number;
  status: string;
  diagnostic: string;
}

/** Whether a transaction may go now; `deferral` says why not (the recipients are deferred with it, no connection made). */
export type Admission = { ok: true } | { ok: false; deferral: string; retryAfterMs: number };

/** A reply that matched a rule, kept per site (newest first) for the admin API. */
export interface EgressReplyRecord {
  at: string;
  code: number;
  status: string;
  text: string;
  /** The source address that got it ('' when none is bound). */
  source: string;
  /** The action taken ('' when the reply matched no rule). */
  action: string;
}

/** A site's shared state (migration 32, egress_sites): what every worker honours and the admin API shows. */
export interface EgressSiteState {
  site: string;
  /** The throttled rate ("60/min") while `throttledUntil` is ahead; null: the site's own. */
  throttleRate: string | null;
  throttledUntil: Date | null;
  suspendedUntil: Date | null;
  /** Source addresses suspended at this site, each until when. */
  suspendedSources: { address: string; until: string }[];
  lastReplies: EgressReplyRecord[];
  /** Connections open and attempts in the last minute, as the last worker to write saw them. */
  connections: number;
  attemptsLastMinute: number;
  updatedAt: Date;
}

/**
 * The shaper as direct delivery uses it (delivery/egress/shaper.ts). Rates, suspensions and warm-up are its
 * business; the connection limit and messages per connection are the connection pool's, read through shapeOf.
 */
export interface EgressShaper {
  /** The site of a domain whose MX host names are `mxHosts` (in preference order). */
  siteOf(mxHosts: string[]): string;
  /** The site's shape now (the rules file's, with an active throttle applied). */
  shapeOf(site: string): SiteShape;
  /** The source addresses an email of `context` may leave from, in order of preference; [] when no pool applies. */
  sourcesFor(context: EgressContext): SourceAddress[];
  /** May one transaction of `recipients` messages go to `site` from `source` (null: unbound) now? Takes a rate token and warm-up budget when ok. */
  admit(site: string, source: SourceAddress | null, recipients: number): Promise<Admission>;
  /** A reply from `site` (success or failure); answers the action it triggered, if any. */
  observe(site: string, source: SourceAddress | null, reply: ObservedReply, ok: boolean): EgressAction | null;
  /** Connections open to `site` now changed by `delta` (for the shared state). */
  connectionsChanged(site: string, delta: number): void;
  close(): Promise<void>;
}

/** A domain's MTA-STS policy (RFC 8461) as delivery applies it. */
export interface MtaStsPolicy {
  mode: 'enforce' | 'testing' | 'none';
  /** MX patterns (`mail.example.com`, `*.example.net`). */
  mx: string[];
  maxAgeSeconds: number;
}

/** The TLS a delivery used: the negotiated version (`TLSv1.3`) or null for plain text, and whether the certificate was verified. */
export interface DeliveryTls {
  version: string | null;
  verified: boolean;
}
