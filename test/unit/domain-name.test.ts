import { describe, expect, it } from 'vitest';
import { readMailbox, type ParsedAddress } from '../../src/domain/address.js';
import { asciiDomain } from '../../src/domain/domain-name.js';

describe('one rule for domain names', () => {
  it.each([
    ['example.com', 'example.com'],
    ['Example.COM.', 'example.com'],
    ['bücher.de', 'xn--bcher-kva.de'],
    ['xn--bcher-kva.de', 'xn--bcher-kva.de'],
    ['例え.jp', 'xn--r8jz45g.jp'],
  ])('%s is %s', (input, ascii) => {
    expect(asciiDomain(input)).toBe(ascii);
  });

  it.each([
    '',
    'localhost',
    'a..b',
    '-a.com',
    'a-.com',
    'a_b.com',
    '1.2.3.4',
    'a.b/c',
    'u@a.com',
    'a.com:25',
    `${'d'.repeat(64)}.com`,
    // The URL parser strips C0 controls at the ends: what is checked must be what is stored.
    'acme.test\u0001',
    '\u0007acme.test',
    'acme.test\u007f',
  ])('refuses %j', (input) => {
    expect(asciiDomain(input)).toBeUndefined();
  });

  it('an IDN sender address and the domain an operator adds meet in one form', () => {
    expect((readMailbox('Zoë <zoe@BÜCHER.de>') as ParsedAddress).domain).toBe(asciiDomain('bücher.de'));
    expect((readMailbox('zoe@xn--bcher-kva.de') as ParsedAddress).domain).toBe(asciiDomain('bücher.de'));
  });
});
