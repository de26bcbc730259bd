import type { Config } from '../config.js';
import type { DkimKeysRepo } from '../db/index.js';
import type { Logger } from '../logger.js';

const NAMED = 10;

/**
 * In direct delivery, mail is sent only from domains whose DKIM record is verified (services/sender-check.ts).
 * Said at start for the verified domains that are not, so that an operator who switches to direct delivery
 * learns before the first refused send that the seeded default domain (verified by fiat, its record published
 * by nobody) or a domain verified with `force` cannot send.
 */
export async function warnOfDirectSendersWithoutDkim(
  config: Pick<Config, 'delivery'>,
  dkimKeys: Pick<DkimKeysRepo, 'verifiedWithoutDkimRecord'>,
  logger: Logger,
): Promise<void> {
  if (config.delivery !== 'direct') return;
  const { names, count } = await dkimKeys.verifiedWithoutDkimRecord(NAMED);
  if (count === 0) return;
  logger.warn(
    { domains: names, count },
    `MAILER_DELIVERY=direct: sends from ${count} verified domain(s) are refused (403) until their DKIM record is published and verified ` +
      '(POST /domains/:id/verify): receivers would reject unauthenticated mail',
  );
}
