import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createUnsubscribeTokens } from '../../src/delivery/message/unsubscribe-token.js';
import type { UnsubscribeOutcome, UnsubscribeTarget } from '../../src/domain/entities/unsubscribes.js';
import { AppError } from '../../src/errors.js';
import { UNSUBSCRIBE_PAGE_CSP, unsubscribePage } from '../../src/http/unsubscribe-page.js';
import { withUnsubscribeAddresses } from '../../src/services/inbound-unsubscribe.js';
import { createUnsubscribeService } from '../../src/services/unsubscribe-service.js';

const tokens = createUnsubscribeTokens('unsubscribe-service-unit-secret');
const target = (emailId: string): UnsubscribeTarget => ({
  emailId,
  accountId: 'acc_1',
  recipient: 'reader@example.net',
  topic: null,
  brandName: 'Acme',
  brandLogoUrl: null,
});

/** A repository whose statements wait until released, counting what runs at once. */
function heldRepo() {
  const calls: string[] = [];
  const held: (() => void)[] = [];
  let running = 0;
  let most = 0;
  const hold = async () => {
    running++;
    most = Math.max(most, running);
    await new Promise<void>((resolve) => held.push(resolve));
    running--;
  };
  return {
    calls,
    release: () => held.splice(0).forEach((r) => r()),
    get held() {
      return held.length;
    },
    get most() {
      return most;
    },
    repo: {
      async target(emailId: string) {
        calls.push(`target ${emailId}`);
        await hold();
        return emailId === 'em_gone' ? undefined : target(emailId);
      },
      async record(emailId: string): Promise<{ outcome: UnsubscribeOutcome; target?: UnsubscribeTarget }> {
        calls.push(`record ${emailId}`);
        await hold();
        return emailId === 'em_gone' ? { outcome: 'unknown_email' } : { outcome: 'recorded', target: target(emailId) };
      },
    },
  };
}

const settle = () => new Promise((r) => setTimeout(r, 0));
const notFound = { kind: 'not_found' };

describe('the unsubscribe service', () => {
  it('refuses a forged token before any statement', async () => {
    const held = heldRepo();
    const service = createUnsubscribeService({ unsubscribes: held.repo, tokens, now: () => new Date() });
    const signed = tokens.sign('em_1');
    const forged = `${signed.slice(0, -1)}${signed.endsWith('a') ? 'b' : 'a'}`;
    await expect(service.unsubscribe(forged)).rejects.toMatchObject(notFound);
    await expect(service.page('em_1-xyz')).rejects.toMatchObject(notFound);
    expect(held.calls).toEqual([]);
  });

  it('answers 404 for a signed token whose email is gone', async () => {
    const held = heldRepo();
    const service = createUnsubscribeService({ unsubscribes: held.repo, tokens, now: () => new Date() });
    const done = expect(service.unsubscribe(tokens.sign('em_gone'))).rejects.toMatchObject(notFound);
    await settle();
    held.release();
    await done;
  });

  it('shares one statement among requests for one email, and runs at most four at once', async () => {
    const held = heldRepo();
    const service = createUnsubscribeService({ unsubscribes: held.repo, tokens, now: () => new Date() });
    const same = Array.from({ length: 20 }, () => service.unsubscribe(tokens.sign('em_same')));
    const others = Array.from({ length: 10 }, (_, i) => service.unsubscribe(tokens.sign(`em_${i}`)));
    await settle();
    expect(held.held).toBe(4);
    for (let i = 0; i < 20 && held.held > 0; i++) {
      held.release();
      await settle();
    }
    const answers = await Promise.all([...same, ...others]);
    expect(answers.every((a) => a.outcome === 'recorded')).toBe(true);
    expect(held.calls.filter((c) => c === 'record em_same')).toHaveLength(1);
    expect(held.calls).toHaveLength(11);
    expect(held.most).toBe(4);
  });

  it('refuses with 503 (retry) once 1,000 emails are waiting, instead of queueing more', async () => {
    const held = heldRepo();
    const service = createUnsubscribeService({ unsubscribes: held.repo, tokens, now: () => new Date() });
    const waiting = Array.from({ length: 1000 }, (_, i) => service.unsubscribe(tokens.sign(`em_w${i}`)));
    await settle();
    const refused = await service.unsubscribe(tokens.sign('em_late')).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(AppError);
    expect(refused).toMatchObject({ kind: 'unavailable' });
    // One already waiting is still joined, not refused.
    const joined = service.unsubscribe(tokens.sign('em_w999'));
    for (let i = 0; i < 400 && held.held > 0; i++) {
      held.release();
      await settle();
    }
    await Promise.all([...waiting, joined]);
    expect(held.calls).toHaveLength(1000);
  });
});

describe('the mailto unsubscribe address at the inbound listener', () => {
  const reports = {
    accepted: [] as string[],
    received: [] as string[][],
    acceptsRecipient(address: string) {
      this.accepted.push(address);
      return true;
    },
    async receive(_raw: Buffer, envelope?: { rcptTo: string[] }) {
      this.received.push(envelope?.rcptTo ?? []);
      return 'recorded' as const;
    },
  };

  it('takes unsub- addresses whose token is signed, unsubscribes each email once, and passes the rest to the reports', async () => {
    const unsubscribed: string[] = [];
    const inbound = withUnsubscribeAddresses(reports, {
      tokens,
      unsubscribe: {
        async unsubscribeEmail(emailId) {
          unsubscribed.push(emailId);
          if (emailId === 'em_gone') throw new AppError('not_found', 'gone');
          return { outcome: 'recorded', target: target(emailId) };
        },
      },
      logger: { info: () => {} },
    });
    const good = `unsub-${tokens.sign('em_1')}@rp.news.example`;
    expect(inbound.acceptsRecipient(good)).toBe(true);
    expect(inbound.acceptsRecipient(good.toUpperCase())).toBe(true);
    expect(inbound.acceptsRecipient(`unsub-em_1-${'a'.repeat(24)}@rp.news.example`)).toBe(false);
    expect(reports.accepted).toEqual([]);
    expect(inbound.acceptsRecipient('b-whatever@rp.news.example')).toBe(true);
    expect(reports.accepted).toEqual(['b-whatever@rp.news.example']);

    const raw = Buffer.from('Subject: unsubscribe\r\n\r\nplease\r\n');
    expect(await inbound.receive(raw, { rcptTo: [good, good.toUpperCase(), 'b-x@rp.news.example'] })).toBe('recorded');
    expect(unsubscribed).toEqual(['em_1']);
    expect(reports.received).toEqual([['b-x@rp.news.example']]);
    // Signed, but its email is gone: refused (550), nothing else happens.
    expect(await inbound.receive(raw, { rcptTo: [`unsub-${tokens.sign('em_gone')}@rp.x`] })).toBe('refused');
  });

  it('asks the sender to retry (throws) when the unsubscribe cannot be written now', async () => {
    const inbound = withUnsubscribeAddresses(reports, {
      tokens,
      unsubscribe: {
        unsubscribeEmail: async () => {
          throw new AppError('unavailable', 'database down');
        },
      },
      logger: { info: () => {} },
    });
    await expect(
      inbound.receive(Buffer.from('x'), { rcptTo: [`unsub-${tokens.sign('em_1')}@rp.x`] }),
    ).rejects.toMatchObject({ kind: 'unavailable' });
  });
});

describe('the unsubscribe page', () => {
  it("allows its one style block by hash and nothing inline besides; escapes the account's and the email's text", () => {
    const html = unsubscribePage(
      {
        ...target('em_1'),
        topic: 'a"b',
        brandName: '<b>Acme</b> & co',
        brandLogoUrl: 'https://x.example/l.png?a=1&b="2"',
      },
      '/u/em_1-abc',
    );
    const style = /<style>([\s\S]*?)<\/style>/.exec(html)![1]!;
    const hash = crypto.createHash('sha256').update(style).digest('base64');
    expect(UNSUBSCRIBE_PAGE_CSP).toContain(`style-src 'sha256-${hash}'`);
    expect(UNSUBSCRIBE_PAGE_CSP).toContain("default-src 'none'");
    expect(html).not.toMatch(/<script|\son\w+=/i);
    expect(html).toContain('&lt;b&gt;Acme&lt;/b&gt; &amp; co');
    expect(html).toContain('“a&quot;b”');
    expect(html).toContain('src="https://x.example/l.png?a=1&amp;b=&quot;2&quot;"');
    expect(html).not.toContain('<b>Acme');
  });

  it('shows no image for a logo URL that is not https', () => {
    const html = unsubscribePage({ ...target('em_1'), brandLogoUrl: 'javascript:alert(1)' }, '/u/x');
    expect(html).not.toContain('<img');
  });
});
