import { describe, expect, it } from 'vitest';
import { chunk, domainOf, groupByDomain } from '../../src/delivery/transport/direct/recipient-domains.js';

describe('grouping envelope recipients by domain', () => {
  it('groups case-insensitively by domain, keeping each address as written and in first-seen order', () => {
    const groups = groupByDomain(['a@Example.COM', 'b@other.org', 'C@example.com', 'd@OTHER.org.', 'a@Example.COM']);
    expect([...groups]).toEqual([
      ['example.com', ['a@Example.COM', 'C@example.com']],
      ['other.org', ['b@other.org', 'd@OTHER.org.']],
    ]);
  });

  it('takes the domain after the last @ and gives none to an address without one', () => {
    expect(domainOf('"odd@local"@xn--bcher-kva.example')).toBe('xn--bcher-kva.example');
    expect(domainOf('postmaster')).toBe('');
  });

  it('splits a long list into transactions of at most the given size', () => {
    const addresses = Array.from({ length: 250 }, (_, i) => `u${i}@example.com`);
    const parts = chunk(addresses, 100);
    expect(parts.map((p) => p.length)).toEqual([100, 100, 50]);
    expect(parts.flat()).toEqual(addresses);
  });
});
