import { describe, expect, it } from 'vitest';
import type { LoadedEmail } from '../../src/domain/entities/delivery.js';
import { createLogger } from '../../src/logger.js';
import { createMetrics } from '../../src/metrics.js';
import { createPrebuiltMessages } from '../../src/delivery/message/prebuilt-messages.js';
import type { DeliveryDeps } from '../../src/delivery/delivery-deps.js';
import { createEmailSender } from '../../src/delivery/email-sender.js';

/** The sender's builder with fakes at its seams: no database, no SMTP (nothing here sends). */
function senderWith(prebuilt = createPrebuiltMessages({ maxBytes: 1 << 20, ttlMs: 60_000 })) {
  const deps: DeliveryDeps = {
    emailDeliveries: { recordOutcomes: async () => new Map() } as unknown as DeliveryDeps['emailDeliveries'],
    suppressions: { matching: async () => new Map() },
    transport: {} as DeliveryDeps['transport'],
    rewriteForTracking: (html, emailId) => `${html}<img src="https://t.test/o/${emailId}">`,
    reportToken: (emailId) => `${emailId}-token`,
    recipientToken: (emailId, recipient) => `${emailId}.${recipient}-token`,
    returnPath: (token, domain) => `b+${token}@bounces.${domain}`,
    listUnsubscribe: (emailId, domain) => ({
      url: `https://track.test/u/${emailId}-mac`,
      mailto: `unsub-${emailId}-mac@bounces.${domain}`,
    }),
    dkimKey: async () => undefined,
    prebuilt,
    judgeAccount: async () => undefined,
    logger: createLogger('silent'),
    metrics: createMetrics(),
  };
  return createEmailSender(deps);
}

function loadedEmail(id: string, tracking = false): LoadedEmail {
  return {
    email: {
      id,
      accountId: 'acc_1',
      jobType: 'scheduled',
      jobId: 'sch_1',
      senderDomain: 'example.com',
      subject: 'Hello',
      html: '<p>hi</p>',
      text: 'hi',
      from: { address: 'a@example.com', name: 'A' },
      to: [
        { address: 'x@example.net', name: '' },
        { address: 'y@example.net', name: '' },
      ],
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
    sender: { accountStatus: 'healthy', openTracking: tracking, clickTracking: false },
    lastError: '',
    answered: [],
  };
}

describe('messages built ahead (scheduled emails)', () => {
  it('a send finds the message built ahead: the same bytes, under the envelope of its own recipients (suppressed ones left out)', async () => {
    const prebuilt = createPrebuiltMessages({ maxBytes: 1 << 20, ttlMs: 60_000 });
    const kept: Buffer[] = [];
    const put = prebuilt.put;
    prebuilt.put = (emailId, message, terms) => (kept.push(message.raw), put(emailId, message, terms));
    const loaded = loadedEmail('em_ahead');
    expect(await senderWith(prebuilt).buildAhead(loaded)).toBe(true);
    expect(kept).toHaveLength(1);
    expect(kept[0]!.toString()).toContain('Message-ID: <em_ahead@example.com>');
    // The send is handed that very buffer, not a new build (MIME boundaries are random: a new one would differ).
    const built = await senderWith(prebuilt).prepare(loadedEmail('em_ahead'), new Map()).message;
    expect(built!.raw).toBe(kept[0]);

    const sender2 = senderWith();
    await sender2.buildAhead(loaded);
    const first = sender2.prepare(
      loadedEmail('em_ahead'),
      new Map([['acc_1 y@example.net', [{ scope: 'all' as const, topic: '' }]]]),
    );
    const message = (await first.message)!;
    // The envelope sender of its first recipient's copy (x@, recipient 0); each copy gets its own at hand-over.
    expect(message.envelope).toEqual({ from: 'b+em_ahead.0-token@bounces.example.com', to: ['x@example.net'] });
    expect(first.skipped).toEqual(['y@example.net']);
    // Taken once: a second attempt (a retry) builds afresh.
    const again = (await sender2.prepare(loadedEmail('em_ahead'), new Map()).message)!;
    expect(again.raw).not.toBe(message.raw);
    expect(again.envelope.to).toEqual(['x@example.net', 'y@example.net']);
  });

  it('a message built under other terms is not sent: tracking switched on meanwhile builds it again, with the pixel', async () => {
    const prebuilt = createPrebuiltMessages({ maxBytes: 1 << 20, ttlMs: 60_000 });
    const sender = senderWith(prebuilt);
    await sender.buildAhead(loadedEmail('em_terms', false));
    const message = (await sender.prepare(loadedEmail('em_terms', true), new Map()).message)!;
    expect(message.raw.toString()).toContain('t.test/o/em_terms');
    // The stale one was taken out, not left for later.
    expect(prebuilt.take('em_terms', { openTracking: false, clickTracking: false, dkim: undefined })).toBeUndefined();
  });

  it('without a store nothing is built ahead, and sends build as always', async () => {
    const sender = createEmailSender({
      ...({} as DeliveryDeps),
      emailDeliveries: { recordOutcomes: async () => new Map() } as unknown as DeliveryDeps['emailDeliveries'],
    });
    expect(await sender.buildAhead(loadedEmail('em_none'))).toBe(false);
  });
});
