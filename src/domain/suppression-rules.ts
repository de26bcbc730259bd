import { invalid } from '../errors.js';
import { addressKey, canonicalAddress, describeAddressProblem, readMailbox } from './address.js';
import { isOneOf, SUPPRESSION_SCOPES, type Stream } from './catalog.js';
import type { NewSuppressionEntry, SuppressionRule, SuppressionScope } from './entities/suppressions.js';
import { LIMITS } from './limits.js';
import { TOPIC_MAX_CHARS, TOPIC_PATTERN } from './streams.js';

/**
 * Which suppressions stop which email (CONTRACT.md, "Streams, one-click unsubscribe and suppressions"), and
 * what a suppression the account adds may be. Scope `all` stops every email to the address; scope `broadcast`
 * only broadcast emails, of every topic when its topic is '' and of that topic alone otherwise. Transactional
 * mail ignores broadcast suppressions: a password reset must reach someone who unsubscribed from a newsletter.
 */

/** What delivery knows of an email when it decides: its stream and its topic (null: none). */
export interface SuppressibleEmail {
  stream: Stream;
  topic: string | null;
}

export function suppresses(rule: SuppressionRule, email: SuppressibleEmail): boolean {
  if (rule.scope === 'all') return true;
  if (email.stream !== 'broadcast') return false;
  return rule.topic === '' || rule.topic === email.topic;
}

/** True when any of `rules` (one address's suppressions) stops `email`. */
export const suppressedBy = (rules: readonly SuppressionRule[] | undefined, email: SuppressibleEmail): boolean =>
  rules !== undefined && rules.some((r) => suppresses(r, email));

/**
 * A suppression's address as an account gives it: one bare address, checked as a send's recipient is
 * (address.ts), kept in its key form (canonical, lower case), which is what delivery matches recipients on.
 * Throws a 400 naming `field`.
 */
export function suppressionAddress(input: string, field: string): string {
  const text = input.trim();
  // The common case without the full parser: a bare address (an import reads 100,000 of them).
  const canonical = text.length <= LIMITS.addressChars ? canonicalAddress(text) : undefined;
  if (canonical !== undefined) return addressKey(canonical);
  const parsed = readMailbox(text);
  if (typeof parsed === 'string') throw invalid(`${field} ${describeAddressProblem(parsed)}`);
  throw invalid(`${field} must be a bare address (user@example.com), without a display name`);
}

const shown = (s: string) => JSON.stringify(s.length > 80 ? `${s.slice(0, 80)}…` : s);

/**
 * A scope and topic as given ('' for either: not given): the scope defaults to `all`, and a topic is only
 * for scope `broadcast` (1–64 of letters, digits, `.`, `_`, `-`, as a send's topic). `fields` names them.
 */
export function suppressionRule(
  given: { scope: string; topic: string },
  fields: { scope: string; topic: string } = { scope: 'scope', topic: 'topic' },
): SuppressionRule {
  const scope = given.scope === '' ? 'all' : given.scope;
  if (!isOneOf<SuppressionScope>(SUPPRESSION_SCOPES, scope))
    throw invalid(`${fields.scope} must be one of ${SUPPRESSION_SCOPES.join(', ')}; got ${shown(scope)}`);
  if (given.topic === '') return { scope, topic: '' };
  if (scope !== 'broadcast') throw invalid(`${fields.topic} is only allowed with scope "broadcast"`);
  if (!TOPIC_PATTERN.test(given.topic))
    throw invalid(
      `${fields.topic}: ${shown(given.topic)} must be 1 to ${TOPIC_MAX_CHARS} of letters, digits, ".", "_" and "-"`,
    );
  return { scope, topic: given.topic };
}

/** A suppression to add, from an address, scope and topic as given. */
export function suppressionEntry(given: { email: string; scope: string; topic: string }): NewSuppressionEntry {
  return { address: suppressionAddress(given.email, 'email'), ...suppressionRule(given) };
}
