import { describe, expect, it } from 'vitest';
import { parseAddress } from '../../src/domain/address.js';

describe('parseAddress', () => {
  it.each([
    ['user@example.com', { name: '', address: 'user@example.com', domain: 'example.com' }],
    ['  user@example.com  ', { name: '', address: 'user@example.com', domain: 'example.com' }],
    ['User@Example.COM', { name: '', address: 'User@example.com', domain: 'example.com' }],
    ['Jane Doe <jane@example.com>', { name: 'Jane Doe', address: 'jane@example.com', domain: 'example.com' }],
    ['<jane@example.com>', { name: '', address: 'jane@example.com', domain: 'example.com' }],
    ['"Doe, Jane" <jane@example.com>', { name: 'Doe, Jane', address: 'jane@example.com', domain: 'example.com' }],
    ['"Jane \\"JD\\" Doe" <jane@example.com>', { name: 'Jane "JD" Doe', address: 'jane@example.com', domain: 'example.com' }],
    ['"<not@an.address>" <real@example.com>', { name: '<not@an.address>', address: 'real@example.com', domain: 'example.com' }],
    ['first.last+tag@sub.example.co.uk', { name: '', address: 'first.last+tag@sub.example.co.uk', domain: 'sub.example.co.uk' }],
    ["o'brien@example.ie", { name: '', address: "o'brien@example.ie", domain: 'example.ie' }],
    ['Zoë <zoe@bücher.de>', { name: 'Zoë', address: 'zoe@bücher.de', domain: 'bücher.de' }],
    ['info@例え.jp', { name: '', address: 'info@例え.jp', domain: '例え.jp' }],
    ['a@xn--bcher-kva.de', { name: '', address: 'a@xn--bcher-kva.de', domain: 'xn--bcher-kva.de' }],
  ])('parses %j', (input, expected) => {
    expect(parseAddress(input)).toEqual(expected);
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
