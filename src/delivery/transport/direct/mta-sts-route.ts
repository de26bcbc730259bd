import { validateMx } from 'mailauth/lib/mta-sts.js';
import type { MtaStsPolicy } from '../../../domain/entities/egress.js';
import type { SmtpFailure } from '../smtp-outcome.js';
import type { MxRoute } from './mx-route.js';

/**
 * A domain's MTA-STS policy (RFC 8461) applied to where its mail goes: a pure step between resolving the MX
 * route (mx-route.ts) and connecting. `enforce` keeps only the MX hosts the policy lists and asks for a verified
 * certificate for the MX name (no plain-text fallback); `testing` delivers as without a policy and says what
 * would have failed; `none` (or no policy) changes nothing.
 */
export interface MtaStsRoute {
  route: MxRoute;
  /** The policy's mode ('none' when there is none): in testing, a TLS failure is logged, not acted on. */
  mode: MtaStsPolicy['mode'];
  /** enforce: every connection must use STARTTLS with a certificate verified for the target's `exchange`. */
  requireVerifiedTls: boolean;
  /** testing: what enforce would have refused (for the log), else null. */
  report: string | null;
}

/** The deferral of an enforce policy that cannot be met (no listed MX host, or TLS unverified): retried later. */
export const mtaStsFailure = (domain: string, why: string): SmtpFailure => ({
  kind: 'soft',
  code: 0,
  status: '4.7.5',
  diagnostic: `4.7.5 MTA-STS: ${domain}: ${why}`.slice(0, 1000),
});

/**
 * Whether `exchange` is one of the policy's MX patterns, by mailauth's validateMx. RFC 8461 3.1 lets a
 * `*.` wildcard stand for exactly one label (`*.example.com` matches `mx.example.com`, not
 * `a.mx.example.com`); validateMx accepts any number, so the extra labels are refused here.
 */
export function mxMatchesPolicy(exchange: string, policy: Pick<MtaStsPolicy, 'mode' | 'mx'>): boolean {
  const host = exchange.trim().replace(/\.$/, '').toLowerCase();
  // validateMx answers valid for mode none without looking: the pattern check is asked for as enforce.
  const result = validateMx(host, { mode: 'enforce', mx: policy.mx });
  if (!result.valid) return false;
  const match = result.match ?? '';
  if (!match.startsWith('.')) return true;
  const label = host.slice(0, host.length - match.length);
  return label.length > 0 && !label.includes('.');
}

/** `route` as `policy` allows it for `domain`. A route that already failed (DNS, null MX) is left as it is. */
export function applyMtaStsPolicy(route: MxRoute, policy: MtaStsPolicy | null, domain: string): MtaStsRoute {
  const mode = policy?.mode ?? 'none';
  if (!policy || mode === 'none' || !route.ok) return { route, mode, requireVerifiedTls: false, report: null };
  const listed = route.targets.filter((t) => mxMatchesPolicy(t.exchange, policy));
  const unlisted = [...new Set(route.targets.filter((t) => !listed.includes(t)).map((t) => t.exchange))];
  const why = `MX ${unlisted.join(', ')} not listed in the policy (mx: ${policy.mx.join(', ')})`;
  if (policy.mode === 'testing')
    return { route, mode, requireVerifiedTls: false, report: unlisted.length > 0 ? `testing policy: ${why}` : null };
  if (listed.length === 0)
    return { route: { ok: false, failure: mtaStsFailure(domain, why) }, mode, requireVerifiedTls: true, report: null };
  return { route: { ok: true, targets: listed, skipped: route.skipped }, mode, requireVerifiedTls: true, report: null };
}
