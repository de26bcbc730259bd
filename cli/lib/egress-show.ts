import type { EgressPool, EgressSite, GetEgressStatusResponse } from '../../src/gen/mail/v1/egress_pb.js';
import { clip, list, table } from './format.js';

// `mailer egress status` and `resume`: the sites and pools of GET /admin/egress as tables. A site's state is read
// from its times (the API answers only those still ahead): suspended beats throttled, which beats ok.

/** suspended, throttled, sources suspended (some of its source addresses only), or ok. */
export function siteState(s: EgressSite): string {
  if (s.suspendedUntil !== '') return 'suspended';
  if (s.throttledUntil !== '') return 'throttled';
  if (s.suspendedSources.length > 0) return 'sources suspended';
  return 'ok';
}

/** Until when the state lasts: the suspension's or throttle's end, else the last source suspension's. */
function until(s: EgressSite): string {
  if (s.suspendedUntil !== '') return s.suspendedUntil;
  if (s.throttledUntil !== '') return s.throttledUntil;
  return (
    s.suspendedSources
      .map((x) => x.until)
      .sort()
      .at(-1) ?? ''
  );
}

/** The rate in force, and the configured one beside it when a throttle lowers it. */
function rate(s: EgressSite): string {
  const current = s.currentRate || 'none';
  return s.currentRate !== s.rate ? `${current} (of ${s.rate || 'none'})` : current;
}

/** A reply as the server sent it: its text, which carries the code unless it was a local error's. */
const replyText = (r: { code: number; text: string }): string =>
  r.text.startsWith(`${r.code}`) ? r.text : `${r.code} ${r.text}`;

function lastReply(s: EgressSite): string {
  const r = s.lastReplies[0];
  return r ? clip(`${replyText(r)}${r.action ? ` [${r.action}]` : ''}`, 60) : '';
}

export function sitesTable(sites: EgressSite[]): string {
  return table(
    ['SITE', 'STATE', 'UNTIL', 'RATE', 'CONNECTIONS', 'ATTEMPTS/MIN', 'LAST REPLY'],
    sites.map((s) => [
      s.site,
      siteState(s),
      until(s),
      rate(s),
      `${s.connections}/${s.connectionLimit}`,
      `${s.attemptsLastMinute}`,
      lastReply(s),
    ]),
  );
}

/** Each source address suspended at a site, on a line of its own. */
function suspendedSources(sites: EgressSite[]): string[] {
  return sites.flatMap((s) => s.suspendedSources.map((x) => `  ${s.site}: ${x.address} until ${x.until}`));
}

function poolsTable(pools: EgressPool[]): string {
  return table(
    ['POOL', 'ADDRESS', 'EHLO', 'FOR', 'WARM-UP TODAY'],
    pools.flatMap((p) =>
      p.sources.map((x) => [
        p.name,
        x.address,
        x.ehlo,
        list([...p.streams, ...p.accounts]) || '-',
        x.warmupLimitToday < 0 ? `${x.sentToday} sent, no limit` : `${x.sentToday}/${x.warmupLimitToday}`,
      ]),
    ),
  );
}

export function showEgressStatus(res: GetEgressStatusResponse): string {
  const sources = suspendedSources(res.sites);
  return [
    `Rules: ${res.rules?.path ?? ''}`,
    ...(res.rules?.error ? [`Rules file refused (the workers keep the rules they had): ${res.rules.error}`] : []),
    '',
    sitesTable(res.sites),
    ...(sources.length > 0 ? ['', 'Source addresses suspended:', ...sources] : []),
    '',
    poolsTable(res.pools),
  ].join('\n');
}
