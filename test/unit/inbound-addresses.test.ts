import { describe, expect, it } from 'vitest';
import { RETURN_PATH_PREFIX } from '../../src/delivery/message/return-path.js';
import { UNSUBSCRIBE_ADDRESS_PREFIX } from '../../src/delivery/message/unsubscribe-token.js';
import {
  isWithin,
  readRouteMatch,
  recipientParts,
  RESERVED_LOCAL_PREFIXES,
} from '../../src/domain/inbound-addresses.js';

const problem = (match: string) => {
  const read = readRouteMatch(match);
  return 'problem' in read ? read.problem : undefined;
};

describe("an inbound route's match", () => {
  it('is stored in key form: the local part lower case, the domain ASCII and lower case', () => {
    expect(readRouteMatch('Support@Acme.TEST')).toEqual({ localPart: 'support', domain: 'acme.test' });
    expect(readRouteMatch('*@in.acme.test')).toEqual({ localPart: '*', domain: 'in.acme.test' });
    expect(readRouteMatch(' Hilfe@Bücher.de ')).toEqual({ localPart: 'hilfe', domain: 'xn--bcher-kva.de' });
    expect(readRouteMatch("o'brien.j_x-y@acme.test")).toEqual({ localPart: "o'brien.j_x-y", domain: 'acme.test' });
    expect(readRouteMatch(`${'a'.repeat(64)}@acme.test`)).toMatchObject({ localPart: 'a'.repeat(64) });
  });

  it('refuses what is not local@domain or *@domain, saying what is wrong', () => {
    expect(problem('')).toMatch(/required/);
    expect(problem('acme.test')).toMatch(/not local@domain/);
    expect(problem('@acme.test')).toMatch(/no local part/);
    expect(problem('support+tag@acme.test')).toMatch(/no "\+"/);
    expect(problem('sup*@acme.test')).toMatch(/"\*" stands only for the whole local part/);
    expect(problem('**@acme.test')).toMatch(/"\*" stands only/);
    expect(problem(`${'a'.repeat(65)}@acme.test`)).toMatch(/longer than 64/);
    expect(problem('a..b@acme.test')).toMatch(/valid local part/);
    expect(problem('"quoted"@acme.test')).toMatch(/valid local part/);
    expect(problem('a b@acme.test')).toMatch(/spaces or control characters/);
    expect(problem('a@acme')).toMatch(/not a valid domain name/);
    expect(problem('a@acme.test.')).toMatch(/not a valid domain name/);
    expect(problem('a@1.2.3.4')).toMatch(/not a valid domain name/);
    expect(problem('a@acme.test\u0000')).toMatch(/spaces or control characters/);
    expect(problem('a@acme.test\u0085')).toMatch(/spaces or control characters/);
    expect(problem(`a@${'x'.repeat(2000)}.test`)).toMatch(/longer than/);
  });

  it("refuses the local parts of the service's own return-path and unsubscribe addresses, which no route would be given", () => {
    expect([...RESERVED_LOCAL_PREFIXES].sort()).toEqual([RETURN_PATH_PREFIX, UNSUBSCRIBE_ADDRESS_PREFIX].sort());
    expect(problem('b-sales@acme.test')).toMatch(/starting with "b-" are the service's own/);
    expect(problem('Unsub-x@acme.test')).toMatch(/starting with "unsub-"/);
    expect(readRouteMatch('bsales@acme.test')).toMatchObject({ localPart: 'bsales' });
    expect(readRouteMatch('sub-x@acme.test')).toMatchObject({ localPart: 'sub-x' });
  });
});

describe('a recipient (RCPT TO) in key form', () => {
  it('splits off the mailbox hash after the first +, keeping its case, and lower-cases the rest', () => {
    expect(recipientParts('Support+Ticket-42@Acme.TEST')).toEqual({
      localPart: 'support',
      mailboxHash: 'Ticket-42',
      domain: 'acme.test',
    });
    expect(recipientParts('a+b+c@acme.test')).toEqual({ localPart: 'a', mailboxHash: 'b+c', domain: 'acme.test' });
    expect(recipientParts('plain@acme.test')).toEqual({ localPart: 'plain', mailboxHash: '', domain: 'acme.test' });
    expect(recipientParts('+only@acme.test')).toEqual({ localPart: '', mailboxHash: 'only', domain: 'acme.test' });
    expect(recipientParts('hilfe@bücher.de')).toMatchObject({ domain: 'xn--bcher-kva.de' });
  });

  it('is undefined for anything malformed or too long, before any lookup', () => {
    for (const bad of [
      '',
      'nobody',
      '@acme.test',
      'a@',
      'a@acme',
      'a b@acme.test',
      '"q"@acme.test',
      'a@acme.test.',
      `${'a'.repeat(65)}@acme.test`,
      `a@${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(63)}.${'e'.repeat(63)}.${'f'.repeat(60)}.test`,
      `${'a'.repeat(64)}@${'b'.repeat(250)}.test`,
      'a\r\n@acme.test',
      'a@acme.test\u0000',
      'a@acme.test\t',
    ])
      expect(recipientParts(bad), JSON.stringify(bad)).toBeUndefined();
  });
});

describe('a domain within another', () => {
  it('is the domain itself or a subdomain of it, label by label', () => {
    expect(isWithin('acme.test', 'acme.test')).toBe(true);
    expect(isWithin('in.acme.test', 'acme.test')).toBe(true);
    expect(isWithin('notacme.test', 'acme.test')).toBe(false);
    expect(isWithin('acme.test', 'in.acme.test')).toBe(false);
  });
});
