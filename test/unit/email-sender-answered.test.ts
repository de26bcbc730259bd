import { describe, expect, it } from 'vitest';
import type { AnsweredProgress, LoadedEmail } from '../../src/domain/entities/delivery.js';
import type { LeasedOutcome } from '../../src/domain/entities/delivery.js';
import { createLogger } from '../../src/logger.js';
import { createMetrics } from '../../src/metrics.js';
import type { BuiltMessage } from '../../src/delivery/transport/send-built.js';
import type { TransportResult } from '../../src/delivery/transport/transport.js';
import type { DeliveryDeps } from '../../src/delivery/delivery-deps.js';
import { createEmailSender } from '../../src/delivery/email-sender.js';

/**
 * An email to several recipients is sent as a copy per recipient and recorded once all are answered; each
 * copy answered meanwhile is kept at once (migration 0020), so that an attempt that dies before the outcome
 * leaves them recorded and the next attempt does not send them again (issue 22, item 11). Fakes at the
 * sender's seams: the repository's statements and the SMTP transport.
 */
function senderWith(answerAfterMs: Record<string, number>) {
  const log: string[] = [];
  const kept: AnsweredProgress[] = [];
  const outcomes: LeasedOutcome[] = [];
  const sent: BuiltMessage[] = [];
  const deps: DeliveryDeps = {
    emailDeliveries: {
      recordOutcomes: async (entries: LeasedOutcome[]) => {
        log.push('outcome');
        outcomes.push(...entries);
        return new Map(entries.map((e) => [`${e.token} ${e.outcome.id}`, 'acc_1']));
      },
      recordAnswered: async (entries: AnsweredProgress[]) => {
        for (const e of entries) log.push(`kept ${e.copies.map((c) => c.address).join()}`);
        kept.push(...entries);
      },
    } as unknown as DeliveryDeps['emailDeliveries'],
    suppressions: { matching: async () => new Map() },
    transport: {
      async send(message: BuiltMessage): Promise<TransportResult> {
        sent.push(message);
        const [to] = message.envelope.to;
        await new Promise((r) => setTimeout(r, answerAfterMs[to!] ?? 0));
        log.push(`250 ${to}`);
        return {
          messageId: message.messageId,
          accepted: [{ address: to!, response: `250 ok ${to}` }],
          refused: [],
          deferred: [],
        };
      },
      close: () => {},
    },
    rewriteForTracking: (html) => html,
    reportToken: (emailId) => `${emailId}-token`,
    recipientToken: (emailId, recipient) => `${emailId}.${recipient}-token`,
    returnPath: (token, domain) => `b-${token}@rp.${domain}`,
    listUnsubscribe: (emailId, domain) => ({
      url: `https://track.test/u/${emailId}-mac`,
      mailto: `unsub-${emailId}-mac@rp.${domain}`,
    }),
    dkimKey: async () => undefined,
    judgeAccount: async () => undefined,
    logger: createLogger('silent'),
    metrics: createMetrics(),
  };
  return { sender: createEmailSender(deps), log, kept, outcomes, sent };
}

function loadedEmail(id: string, to: string[], answered: LoadedEmail['answered'] = []): LoadedEmail {
  return {
    email: {
      id,
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
      headerMessageId: `<${id}@example.com>`,
      attachmentCount: 0,
      attempts: 0,
      createdAt: new Date('2026-11-25T10:00:00Z'),
      sentAt: null,
      remainingRecipients: null,
      stream: 'transactional',
      topic: null,
    },
    attachments: [],
    sender: { accountStatus: 'healthy', openTracking: false, clickTracking: false },
    lastError: '',
    answered,
  };
}

const deliveredTo = (o: LeasedOutcome) =>
  o.outcome.events
    .filter((e) => e.type === 'delivery')
    .flatMap((e) => (e.data as { recipients: string[] }).recipients)
    .sort();

describe("copies answered before their email's outcome", () => {
  it('are kept as each is answered, before the outcome that records them all', async () => {
    const { sender, log, outcomes } = senderWith({ 'a@example.net': 0, 'b@example.net': 30, 'c@example.net': 60 });
    const loaded = loadedEmail('em_1', ['a@example.net', 'b@example.net', 'c@example.net']);
    expect(await sender.sendOne('lease-1', loaded, sender.prepare(loaded, new Map()))).toBe('sent');
    expect(log).toEqual([
      '250 a@example.net',
      'kept a@example.net',
      '250 b@example.net',
      'kept b@example.net',
      '250 c@example.net',
      'kept c@example.net',
      'outcome',
    ]);
    expect(outcomes.map((o) => [o.token, o.outcome.status])).toEqual([['lease-1', 'delivered']]);
    expect(deliveredTo(outcomes[0]!)).toEqual(['a@example.net', 'b@example.net', 'c@example.net']);
  });

  it("a single recipient's copy is recorded by its outcome alone, as before", async () => {
    const { sender, log } = senderWith({});
    const loaded = loadedEmail('em_2', ['solo@example.net']);
    await sender.sendOne('lease-2', loaded, sender.prepare(loaded, new Map()));
    expect(log).toEqual(['250 solo@example.net', 'outcome']);
  });

  it("left by an attempt that died are not sent again; the next attempt's outcome records them with its own", async () => {
    const { sender, sent, outcomes } = senderWith({});
    const loaded = loadedEmail(
      'em_3',
      ['a@example.net', 'b@example.net', 'c@example.net'],
      [{ address: 'a@example.net', response: '250 ok a' }],
    );
    expect(await sender.sendOne('lease-3', loaded, sender.prepare(loaded, new Map()))).toBe('sent');
    expect(sent.map((m) => m.envelope.to[0]).sort()).toEqual(['b@example.net', 'c@example.net']);
    // Each copy still under its own recipient's return path (b is the 2nd recipient, c the 3rd).
    expect(sent.map((m) => m.envelope.from).sort()).toEqual([
      'b-em_3.1-token@rp.example.com',
      'b-em_3.2-token@rp.example.com',
    ]);
    expect(deliveredTo(outcomes[0]!)).toEqual(['a@example.net', 'b@example.net', 'c@example.net']);
    expect(outcomes[0]!.outcome.events.map((e) => e.type)).toContain('send');
  });

  it('when every copy had been answered before the attempt died, nothing is sent and the outcome records them', async () => {
    const { sender, sent, outcomes } = senderWith({});
    const answered = [
      { address: 'a@example.net', response: '250 ok a' },
      { address: 'b@example.net', response: '250 ok b' },
    ];
    const loaded = loadedEmail('em_4', ['a@example.net', 'b@example.net'], answered);
    expect(await sender.sendOne('lease-4', loaded, sender.prepare(loaded, new Map()))).toBe('sent');
    expect(sent).toEqual([]);
    expect(outcomes[0]!.outcome).toMatchObject({ status: 'delivered', messageId: '<em_4@example.com>' });
    expect(deliveredTo(outcomes[0]!)).toEqual(['a@example.net', 'b@example.net']);
  });
});
