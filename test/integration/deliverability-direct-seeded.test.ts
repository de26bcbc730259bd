import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { warnOfDirectSendersWithoutDkim } from '../../src/app/direct-senders.js';
import { createDkimKeysRepo } from '../../src/db/index.js';
import { createLogger } from '../../src/logger.js';
import { admin } from '../helpers/admin-fixtures.js';
import {
  arrivalFor,
  expectDkimPass,
  publishMx,
  publishRecords,
  receiverVerdict,
  recordOf,
  sendEmail,
  useMailWorld,
  waitForStatus,
  type DomainView,
} from '../helpers/deliverability.js';
import { call, validEmail } from '../helpers/http.js';

/**
 * Direct delivery and the seeded default domain (issue 22, item 9): example.com is verified at first start by
 * fiat, and nobody can publish its DKIM record, so in direct mode its mail would fail DKIM and DMARC at every
 * receiver. Sends from a domain whose DKIM record is not verified are refused (403, the spec's sender-domain
 * error), the start says so, and once the record is published and verified the domain sends, signed.
 */
const world = useMailWorld('direct');

const defaultDomain = async (): Promise<DomainView> => {
  const listed = await admin<{ domains: DomainView[] }>(
    world.stack,
    'GET',
    `/accounts/${world.stack.accountId}/domains`,
  );
  return listed.body.domains.find((d) => d.name === 'example.com')!;
};

describe('direct delivery from the seeded default domain', () => {
  it("is refused 403 while its DKIM record is not verified, on REST and with the spec's error form", async () => {
    const domain = await defaultDomain();
    expect(domain.verified).toBe(true);
    expect(recordOf(domain, 'dkim').status).toBe('pending');
    const res = await call('POST', `${world.stack.api}/emails`, {
      token: world.stack.apiKey,
      body: validEmail({ to: ['reader@inbox.test'] }),
    });
    expect(res.status, res.text).toBe(403);
    expect(res.body).toEqual({
      error: 'permission denied',
      message: expect.stringMatching(
        /^The DKIM record of example\.com is not verified: .*Publish its DKIM record \(TXT [a-z0-9-]+\._domainkey\.example\.com, as its dns_records list it\) and verify the domain again$/,
      ),
    });
    const batch = await call('POST', `${world.stack.api}/emails/batch`, {
      token: world.stack.apiKey,
      body: { emails: [validEmail({ to: ['reader@inbox.test'] })] },
    });
    expect(batch.status, batch.text).toBe(403);
  });

  it("is named by the start's warning (verified domains without a verified DKIM record)", async () => {
    const lines: { msg: string; domains?: string[]; count?: number }[] = [];
    const logger = createLogger(
      'warn',
      'test',
      new Writable({ write: (chunk: Buffer, _e, done) => (lines.push(JSON.parse(chunk.toString()) as never), done()) }),
    );
    await warnOfDirectSendersWithoutDkim(world.stack.mailer.config, createDkimKeysRepo(world.stack.mailer.sql), logger);
    await new Promise((resolve) => setImmediate(resolve));
    expect(lines).toEqual([
      expect.objectContaining({
        domains: ['example.com'],
        count: 1,
        msg: expect.stringMatching(/^MAILER_DELIVERY=direct: sends from 1 verified domain\(s\) are refused \(403\)/),
      }),
    ]);
  });

  it('sends, DKIM-signed, once its records are published and it is verified again', async () => {
    const domain = await defaultDomain();
    publishRecords(world.dns, domain.dns_records);
    publishMx(world.dns, 'inbox.test', [{ ip: '127.0.0.2', priority: 10 }]);
    const checked = await admin<DomainView>(world.stack, 'POST', `/domains/${domain.id}/verify`, {});
    expect(recordOf(checked.body, 'dkim').status).toBe('verified');
    const id = await sendEmail(world.stack, { from: 'Example <x@example.com>', to: ['reader@inbox.test'] });
    const message = await arrivalFor(world, 'reader@inbox.test');
    expectDkimPass(await receiverVerdict(world, message), 'example.com');
    await waitForStatus(world.stack, id, ['delivered']);
    expect((await createDkimKeysRepo(world.stack.mailer.sql).verifiedWithoutDkimRecord(10)).count).toBe(0);
  });
});
