import { describe, expect, it } from 'vitest';
import { createPrebuiltMessages, type BuildTerms } from '../../src/delivery/message/prebuilt-messages.js';
import type { BuiltMessage } from '../../src/delivery/transport/send-built.js';

const message = (bytes: number, id = 'm'): BuiltMessage => ({
  envelope: { from: 'b@r.test', to: ['a@x.test'] },
  messageId: `<${id}>`,
  raw: Buffer.alloc(bytes, 'x'),
});
const key = { domainName: 'example.com', keySelector: 's1', privateKey: 'PEM' };
const terms: BuildTerms = { openTracking: false, clickTracking: true, dkim: key };

describe('prebuilt messages', () => {
  it('hands a kept message out once, to a send under the same terms (an equal key counts as the same)', () => {
    const kept = createPrebuiltMessages({ maxBytes: 1000, ttlMs: 60_000 });
    const m = message(10);
    expect(kept.put('em_1', m, terms)).toBe(true);
    expect(kept.take('em_1', { ...terms, dkim: { ...key } })).toBe(m);
    expect(kept.take('em_1', terms)).toBeUndefined();
  });

  it('a send under other terms gets nothing (tracking switched, the key rotated, signing off), and the message is gone', () => {
    const kept = createPrebuiltMessages({ maxBytes: 1000, ttlMs: 60_000 });
    const others: BuildTerms[] = [
      { ...terms, openTracking: true },
      { ...terms, clickTracking: false },
      { ...terms, dkim: { ...key, keySelector: 's2' } },
      { ...terms, dkim: { ...key, privateKey: 'OTHER' } },
      { ...terms, dkim: undefined },
    ];
    for (const other of others) {
      kept.put('em_1', message(10), terms);
      expect(kept.take('em_1', other)).toBeUndefined();
      expect(kept.take('em_1', terms)).toBeUndefined();
    }
  });

  it('keeps at most maxBytes of messages; taking and dropping free their room', () => {
    const kept = createPrebuiltMessages({ maxBytes: 100, ttlMs: 60_000 });
    expect(kept.put('em_1', message(60), terms)).toBe(true);
    expect(kept.put('em_2', message(60), terms)).toBe(false);
    expect(kept.take('em_2', terms)).toBeUndefined();
    kept.drop(['em_1']);
    expect(kept.take('em_1', terms)).toBeUndefined();
    expect(kept.put('em_2', message(60), terms)).toBe(true);
    expect(kept.take('em_2', terms)?.raw.length).toBe(60);
    expect(kept.put('em_3', message(100), terms)).toBe(true);
  });

  it('forgets a message ttlMs after it was kept, and its bytes with it', () => {
    let now = 0;
    const kept = createPrebuiltMessages({ maxBytes: 100, ttlMs: 1000, now: () => now });
    kept.put('em_1', message(80), terms);
    now = 999;
    expect(kept.put('em_2', message(80), terms)).toBe(false);
    now = 1000;
    expect(kept.put('em_2', message(80), terms)).toBe(true);
    expect(kept.take('em_1', terms)).toBeUndefined();
    expect(kept.take('em_2', terms)).toBeDefined();
  });
});
