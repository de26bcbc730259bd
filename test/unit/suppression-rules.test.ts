import { describe, expect, it } from 'vitest';
import type { SuppressionRule } from '../../src/domain/entities/suppressions.js';
import {
  suppressedBy,
  suppresses,
  suppressionAddress,
  suppressionEntry,
  suppressionRule,
} from '../../src/domain/suppression-rules.js';
import { AppError } from '../../src/errors.js';

const all: SuppressionRule = { scope: 'all', topic: '' };
const broadcast: SuppressionRule = { scope: 'broadcast', topic: '' };
const news: SuppressionRule = { scope: 'broadcast', topic: 'news' };

const transactional = { stream: 'transactional' as const, topic: null };
const plainBroadcast = { stream: 'broadcast' as const, topic: null };
const newsBroadcast = { stream: 'broadcast' as const, topic: 'news' };
const offersBroadcast = { stream: 'broadcast' as const, topic: 'offers' };

function refusal(run: () => unknown): string {
  try {
    run();
  } catch (err) {
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).kind).toBe('validation');
    return (err as AppError).message;
  }
  throw new Error('not refused');
}

describe('which suppression stops which email', () => {
  it('scope all stops every email; broadcast ones never a transactional email', () => {
    const table = [
      [all, [true, true, true, true]],
      [broadcast, [false, true, true, true]],
      [news, [false, false, true, false]],
    ] as const;
    for (const [rule, expected] of table)
      expect(
        [transactional, plainBroadcast, newsBroadcast, offersBroadcast].map((e) => suppresses(rule, e)),
        JSON.stringify(rule),
      ).toEqual(expected);
  });

  it('an address with several suppressions is stopped when any applies; none is nothing', () => {
    expect(suppressedBy([news], offersBroadcast)).toBe(false);
    expect(suppressedBy([news, broadcast], offersBroadcast)).toBe(true);
    expect(suppressedBy([news, broadcast], transactional)).toBe(false);
    expect(suppressedBy(undefined, newsBroadcast)).toBe(false);
  });
});

describe('a suppression as an account gives it', () => {
  it('the address canonicalised to its key form, as a recipient is', () => {
    expect(suppressionAddress('  Jane.Doe@Example.COM ', 'email')).toBe('jane.doe@example.com');
    expect(suppressionAddress('zoe@exämple.de', 'email')).toBe('zoe@xn--exmple-cua.de');
    expect(suppressionAddress('victim@ｃustomers.test', 'email')).toBe('victim@customers.test');
  });

  it('anything but one bare address is a 400 naming the field', () => {
    expect(refusal(() => suppressionAddress('', 'email'))).toBe('email is empty');
    expect(refusal(() => suppressionAddress('not an address', 'email'))).toBe('email is not a valid email address');
    expect(refusal(() => suppressionAddress('a@x.com, b@x.com', 'email'))).toMatch(/several addresses/);
    expect(refusal(() => suppressionAddress('Jane <jane@example.com>', 'email'))).toMatch(/bare address/);
    expect(refusal(() => suppressionAddress('a\u0000@x.com', 'email'))).toMatch(/control characters/);
    expect(refusal(() => suppressionAddress(`${'a'.repeat(320)}@x.com`, 'email'))).toMatch(/longer than 320/);
  });

  it('scope defaults to all; a topic only with broadcast, in the topic syntax', () => {
    expect(suppressionRule({ scope: '', topic: '' })).toEqual(all);
    expect(suppressionRule({ scope: 'broadcast', topic: '' })).toEqual(broadcast);
    expect(suppressionRule({ scope: 'broadcast', topic: 'news' })).toEqual(news);
    expect(refusal(() => suppressionRule({ scope: '', topic: 'news' }))).toBe(
      'topic is only allowed with scope "broadcast"',
    );
    expect(refusal(() => suppressionRule({ scope: 'all', topic: 'news' }))).toBe(
      'topic is only allowed with scope "broadcast"',
    );
    expect(refusal(() => suppressionRule({ scope: 'some', topic: '' }))).toBe(
      'scope must be one of all, broadcast; got "some"',
    );
    expect(refusal(() => suppressionRule({ scope: 'broadcast', topic: 'a b' }))).toMatch(
      /^topic: "a b" must be 1 to 64/,
    );
    expect(refusal(() => suppressionRule({ scope: 'broadcast', topic: 'x'.repeat(65) }))).toMatch(/must be 1 to 64/);
  });

  it('an entry is the three together', () => {
    expect(suppressionEntry({ email: 'A@B.example', scope: 'broadcast', topic: 'news' })).toEqual({
      address: 'a@b.example',
      ...news,
    });
  });
});
