import { describe, expect, it } from 'vitest';
import {
  addressKey,
  canonicalAddress,
  formatMailbox,
  readMailbox,
  type ParsedAddress,
} from '../../src/domain/address.js';

/** The mailbox, or undefined when readMailbox names a problem instead. */
const parseAddress = (input: string): ParsedAddress | undefined => {
  const read = readMailbox(input);
  return typeof read === 'string' ? undefined : read;
};

describe('one canonical form of every address', () => {
  it('is the local part as written and the domain in its ASCII form, whichever way the domain was written', () => {
    for (const written of [
      'bob@bücher.de',
      'bob@BÜCHER.de',
      'bob@xn--bcher-kva.de',
      'bob@XN--BCHER-KVA.DE',
      'bob@bu\u0308cher.de',
    ]) {
      expect(canonicalAddress(written)).toBe('bob@xn--bcher-kva.de');
    }
    expect(canonicalAddress('Bob@Example.COM')).toBe('Bob@example.com');
    expect(canonicalAddress('not an address')).toBeUndefined();
  });

  it('compares without regard to case or to the form of the domain (the key suppressions, reports and erasure use)', () => {
    const key = addressKey('victim@customers.test');
    for (const other of ['Victim@CUSTOMERS.test', 'victim@ｃustomers.test', 'victim@cus\u00ADtomers.test'])
      expect(addressKey(other)).toBe(key);
    expect(addressKey('bob@bücher.de')).toBe(addressKey('bob@xn--bcher-kva.de'));
    expect(addressKey('bob@bücher.de')).not.toBe(addressKey('bob@bucher.de'));
    // A report's text that is not a valid address keeps its own lower case.
    expect(addressKey('Odd..Local@Example.NET')).toBe('odd..local@example.net');
  });
});

describe('parseAddress', () => {
  // Without a display name: [input, address (local part as written, domain in its ASCII form), domain].
  it.each([
    ['user@example.com', 'user@example.com', 'example.com'],
    ['  user@example.com  ', 'user@example.com', 'example.com'],
    ['User@Example.COM', 'User@example.com', 'example.com'],
    ['first.last+tag@sub.example.co.uk', 'first.last+tag@sub.example.co.uk', 'sub.example.co.uk'],
    ["o'brien@example.ie", "o'brien@example.ie", 'example.ie'],
    ['info@例え.jp', 'info@xn--r8jz45g.jp', 'xn--r8jz45g.jp'],
    // Fullwidth letters and a soft hyphen map (UTS #46) to the domain nodemailer would send to.
    ['victim@ｃustomers.test', 'victim@customers.test', 'customers.test'],
    ['victim@cus\u00ADtomers.test', 'victim@customers.test', 'customers.test'],
    ['a@xn--bcher-kva.de', 'a@xn--bcher-kva.de', 'xn--bcher-kva.de'],
  ])('parses %j', (input, address, domain) => {
    expect(parseAddress(input)).toEqual({ name: '', address, domain });
  });

  // In angle brackets, with or without a (quoted) display name: [input, name, address, domain].
  it.each([
    ['Jane Doe <jane@example.com>', 'Jane Doe', 'jane@example.com', 'example.com'],
    ['<jane@example.com>', '', 'jane@example.com', 'example.com'],
    ['"Doe, Jane" <jane@example.com>', 'Doe, Jane', 'jane@example.com', 'example.com'],
    ['"Jane \\"JD\\" Doe" <jane@example.com>', 'Jane "JD" Doe', 'jane@example.com', 'example.com'],
    ['Zoë <zoe@bücher.de>', 'Zoë', 'zoe@xn--bcher-kva.de', 'xn--bcher-kva.de'],
  ])('parses %j', (input, name, address, domain) => {
    expect(parseAddress(input)).toEqual({ name, address, domain });
  });

  it.each([
    '',
    'plain',
    '@example.com',
    'user@',
    'user@localhost',
    'user@@example.com',
    'a b@example.com',
    'user@exa mple.com',
    'user@-example.com',
    'user@example-.com',
    'user@example..com',
    '.user@example.com',
    'user.@example.com',
    'us..er@example.com',
    '"quoted local"@example.com',
    'Name <user@example.com',
    // Angle brackets in a name hide an address from whoever reads the From line.
    '"<not@an.address>" <real@example.com>',
    'user@example.com (a comment read as a name)',
    'Name user@example.com>',
    'Name <a@example.com> <b@example.com>',
    'Name <>',
    'a>b@example.com',
    'a"b@example.com',
    `${'l'.repeat(65)}@example.com`,
    `user@${'d'.repeat(64)}.com`,
    `user@${Array.from({ length: 130 }, () => 'ab').join('.')}`,
    `${'x'.repeat(310)}@example.com`,
  ])('refuses %j', (input) => {
    expect(parseAddress(input)).toBeUndefined();
  });

  it.each([
    'user@example.com\r\nBcc: victim@evil.example',
    'user@example.com\nBcc: victim@evil.example',
    'user@example.com\r',
    '"Evil\r\nBcc: victim@evil.example" <user@example.com>',
    'Evil\n <user@example.com>',
    'user\0@example.com',
  ])('refuses CR, LF and NUL anywhere: %j', (input) => {
    expect(parseAddress(input)).toBeUndefined();
  });
});

describe('readMailbox: exactly one mailbox per entry', () => {
  it.each([
    ['ceo@bank.example, Support <sender@verified.example>', 'several-addresses'],
    ['a@x.example, b@y.example, Bob <bob@z.example>', 'several-addresses'],
    ['a@x.example;b@y.example', 'several-addresses'],
    ['<a@x.example>, <b@y.example>', 'several-addresses'],
    ['Staff: a@x.example, b@y.example;', 'group'],
    ['Nobody:;', 'group'],
    ['   ', 'empty'],
    ['Tab\t<a@x.example>', 'control-characters'],
    [`${'x'.repeat(321)}`, 'too-long'],
  ] as const)('%j is %s', (input, problem) => {
    expect(readMailbox(input)).toBe(problem);
  });

  it('a quoted name may hold commas, semicolons and colons', () => {
    expect(readMailbox('"Doe, John; Jr: CEO" <j@x.example>')).toEqual({
      name: 'Doe, John; Jr: CEO',
      address: 'j@x.example',
      domain: 'x.example',
    });
  });

  it('formatMailbox gives back text that reads as the same mailbox', () => {
    for (const m of [
      { name: '', address: 'a@x.example' },
      { name: 'Jane Doe', address: 'jane@x.example' },
      { name: 'Doe, Jane', address: 'jane@x.example' },
      { name: 'Jane "JD" Doe', address: 'jane@x.example' },
      { name: 'Zoë', address: 'zoe@x.example' },
    ]) {
      const read = readMailbox(formatMailbox(m));
      expect(read).toEqual({ ...m, domain: 'x.example' });
    }
  });
});
