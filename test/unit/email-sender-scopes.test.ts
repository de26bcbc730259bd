import { describe, expect, it } from 'vitest';
import type { LoadedEmail } from '../../src/domain/entities/delivery.js';
import type { SuppressionRule } from '../../src/domain/entities/suppressions.js';
import { createLogger } from '../../src/logger.js';
import { createMetrics } from '../../src/metrics.js';
import type { DeliveryDeps } from '../../src/delivery/delivery-deps.js';
import { createEmailSender } from '../../src/delivery/email-sender.js';

/** The sender with fakes at its seams: prepare only decides whom to hand the message to (nothing is sent). */
function sender() {
  const deps: DeliveryDeps = {
    emailDeliveries: { recordOutcomes: async () => new Map() } as unknown as DeliveryDeps['emailDeliveries'],
    suppressions: { matching: async () => new Map() },
    transport: {} as DeliveryDeps['transport'],
    rewriteForTracking: (html) => html,
    reportToken: (emailId) => `${emailId}-token`,
    recipientToken: (emailId, recipient) => `${emailId}.${recipient}-token`,
    returnPath: (token, domain) => `b+${token}@bounces.${domain}`,
    listUnsubscribe: (emailId, domain) => ({
      url: `https://track.test/u/${emailId}-mac`,
      mailto: `unsub-${emailId}-mac@bounces.${domain}`,
    }),
    dkimKey: async () => undefined,
    judgeAccount: async () => undefined,
    logger: createLogger('silent'),
    metrics: createMetrics(),
  };
  return createEmailSender(deps);
}

function loaded(stream: 'transactional' | 'broadcast', topic: string | null, to = ['x@example.net']): LoadedEmail {
  return {
    email: {
      id: 'em_1',
      accountId: 'acc_1',
      jobType: 'direct',
      jobId: '',
      senderDomain: 'example.com',
      subject: 'Hello',
      html: '',
      text: 'hi',
      from: { address: 'a@example.com', name: '' },
      to: to.map((address) => ({ address, name: '' })),
      cc: [],
      bcc: [],
      replyTo: [],
      headers: {},
      tags: {},
      status: 'pending',
      messageId: '',
      headerMessageId: '<em_1@example.com>',
      attachmentCount: 0,
      attempts: 0,
      createdAt: new Date('2026-11-27T10:00:00Z'),
      sentAt: null,
      remainingRecipients: null,
      stream,
      topic,
    },
    attachments: [],
    sender: { accountStatus: 'healthy', openTracking: false, clickTracking: false },
    lastError: '',
    answered: [],
  };
}

const of = (address: string, ...rules: SuppressionRule[]) => new Map([[`acc_1 ${address}`, rules]]);

describe("delivery honours each suppression's scope against the email's stream and topic", () => {
  const cases: [string, Map<string, SuppressionRule[]>, LoadedEmail, boolean][] = [
    [
      'all stops transactional mail',
      of('x@example.net', { scope: 'all', topic: '' }),
      loaded('transactional', null),
      true,
    ],
    ['all stops broadcast mail', of('x@example.net', { scope: 'all', topic: '' }), loaded('broadcast', 'news'), true],
    [
      'broadcast does not stop transactional mail',
      of('x@example.net', { scope: 'broadcast', topic: '' }),
      loaded('transactional', null),
      false,
    ],
    [
      'broadcast (every topic) stops broadcast mail of any topic',
      of('x@example.net', { scope: 'broadcast', topic: '' }),
      loaded('broadcast', 'offers'),
      true,
    ],
    [
      'broadcast of a topic stops that topic',
      of('x@example.net', { scope: 'broadcast', topic: 'news' }),
      loaded('broadcast', 'news'),
      true,
    ],
    [
      'broadcast of a topic does not stop another topic',
      of('x@example.net', { scope: 'broadcast', topic: 'news' }),
      loaded('broadcast', 'offers'),
      false,
    ],
    [
      'broadcast of a topic does not stop broadcast mail without one',
      of('x@example.net', { scope: 'broadcast', topic: 'news' }),
      loaded('broadcast', null),
      false,
    ],
    [
      "another account's suppression stops nothing",
      new Map([['acc_2 x@example.net', [{ scope: 'all' as const, topic: '' }]]]),
      loaded('transactional', null),
      false,
    ],
  ];
  for (const [name, suppressed, email, stopped] of cases) {
    it(name, () => {
      const prepared = sender().prepare(email, suppressed);
      expect(prepared.skipped).toEqual(stopped ? ['x@example.net'] : []);
      expect(prepared.envelopeTo).toEqual(stopped ? [] : ['x@example.net']);
      expect(prepared.message === null).toBe(stopped);
    });
  }

  it('a transactional email to two is sent to the one only broadcast-suppressed, not the one suppressed for all', () => {
    const suppressed = new Map<string, SuppressionRule[]>([
      ['acc_1 x@example.net', [{ scope: 'broadcast', topic: '' }]],
      [
        'acc_1 y@example.net',
        [
          { scope: 'broadcast', topic: 'news' },
          { scope: 'all', topic: '' },
        ],
      ],
    ]);
    const prepared = sender().prepare(loaded('transactional', null, ['x@example.net', 'Y@Example.net']), suppressed);
    expect(prepared.skipped).toEqual(['y@example.net']);
    expect(prepared.envelopeTo).toEqual(['x@example.net']);
  });
});
