import { describe, expect, it } from 'vitest';
import type { DomainRow } from '../../src/domain/entities/domains.js';
import type { StoredStatuses } from '../../src/domain/dns-records.js';
import { AppError } from '../../src/errors.js';
import type { Principal } from '../../src/services/auth-service.js';
import { createSenderCheck } from '../../src/services/sender-check.js';

const principal: Principal = {
  keyId: 'key_1',
  accountId: 'acc_1',
  permission: 'all',
  allowedDomains: [],
  accountStatus: 'healthy',
  dailyQuota: 100,
};
const SELECTOR = 'm20261127';
const DKIM_KEY = `dkim:${SELECTOR}._domainkey.shop.test`;

/** The repositories' seam: one domain of acc_1, verified, with the DKIM statuses of its last DNS check. */
function world(statuses: StoredStatuses, options: { verified?: boolean; selector?: string | undefined } = {}) {
  const row: DomainRow = {
    id: 'dom_1',
    accountId: 'acc_1',
    name: 'shop.test',
    verificationToken: 't',
    verifiedAt: options.verified === false ? null : new Date(),
    openTracking: false,
    clickTracking: false,
    createdAt: new Date(),
    dnsCheckedAt: null,
    dnsStatuses: statuses,
    dnsFailingSince: null,
  };
  return {
    domains: {
      findByName: async (accountId: string, name: string) =>
        accountId === row.accountId && name === row.name ? row : undefined,
    },
    dkimKeys: {
      activeSelector: async (domainId: string) =>
        domainId === row.id ? ('selector' in options ? options.selector : SELECTOR) : undefined,
    },
  };
}

async function refusal(check: ReturnType<typeof createSenderCheck>, domain = 'shop.test'): Promise<AppError> {
  const err = await check(principal, domain).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(AppError);
  return err as AppError;
}

describe('sender check', () => {
  it('in direct delivery, a verified domain whose DKIM record is not verified (forced, seeded) is refused 403, naming the record', async () => {
    for (const statuses of [
      {},
      { [DKIM_KEY]: { status: 'pending', everVerified: false } },
      { [DKIM_KEY]: { status: 'failed', everVerified: true } },
    ] as StoredStatuses[]) {
      const err = await refusal(createSenderCheck({ ...world(statuses), requireDkimRecord: true }));
      expect(err.kind).toBe('permission_denied');
      expect(err.message).toMatch(
        /^The DKIM record of shop\.test is not verified: .*Publish its DKIM record \(TXT m20261127\._domainkey\.shop\.test, as its dns_records list it\) and verify the domain again$/,
      );
    }
    // A domain without an active key cannot sign at all.
    expect(
      (await refusal(createSenderCheck({ ...world({}, { selector: undefined }), requireDkimRecord: true }))).message,
    ).toMatch(/Publish its DKIM record and verify/);
  });

  it('in direct delivery, a domain whose DKIM record checks out sends; elsewhere (relay, catcher) verified is enough', async () => {
    await createSenderCheck({
      ...world({ [DKIM_KEY]: { status: 'verified', everVerified: true } }),
      requireDkimRecord: true,
    })(principal, 'shop.test');
    await createSenderCheck({ ...world({}), requireDkimRecord: false })(principal, 'shop.test');
  });

  it('an unverified or unknown domain is refused as before, in every mode', async () => {
    for (const requireDkimRecord of [true, false]) {
      const unverified = await refusal(createSenderCheck({ ...world({}, { verified: false }), requireDkimRecord }));
      expect(unverified.message).toBe('The domain shop.test is not verified: verify it before sending from it');
      expect((await refusal(createSenderCheck({ ...world({}), requireDkimRecord }), 'other.test')).kind).toBe(
        'permission_denied',
      );
    }
  });
});
