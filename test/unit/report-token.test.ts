import { describe, expect, it } from 'vitest';
import { createReportTokens, MAX_TOKEN_CHARS } from '../../src/delivery/message/report-token.js';
import { isReturnPath, makeReturnPath, parseReturnPath } from '../../src/delivery/message/return-path.js';

const ID = 'em_01jbq7m3k2x9f5v8r4t6w0y2zc';
const tokens = createReportTokens('report-token-unit-test-secret');

describe('report tokens', () => {
  it('name the email they were signed for, in lower case', () => {
    const token = tokens.sign(ID);
    expect(token).toMatch(/^em_01jbq7m3k2x9f5v8r4t6w0y2zc-[a-z2-7]{24}$/);
    expect(tokens.verify(token)).toEqual({ emailId: ID });
    // Some servers change the case of a local part: the token survives it.
    expect(tokens.verify(token.toUpperCase())).toEqual({ emailId: ID });
  });

  it("of one recipient's copy name the email and that recipient, and no other", () => {
    const second = tokens.signRecipient(ID, 1);
    expect(second).toMatch(/^em_01jbq7m3k2x9f5v8r4t6w0y2zc\.1-[a-z2-7]{24}$/);
    expect(tokens.verify(second)).toEqual({ emailId: ID, recipient: 1 });
    expect(tokens.verify(tokens.signRecipient(ID, 49))).toEqual({ emailId: ID, recipient: 49 });
    const mac = second.slice(second.lastIndexOf('-') + 1);
    // Another recipient's index, or the email's own token, under this copy's mac: forged.
    expect(tokens.verify(`${ID}.0-${mac}`)).toBeUndefined();
    expect(tokens.verify(`${ID}-${mac}`)).toBeUndefined();
    expect(tokens.verify(`${ID}.01-${mac}`)).toBeUndefined();
    expect(tokens.verify(`${ID}.1.2-${mac}`)).toBeUndefined();
    expect(() => tokens.signRecipient(ID, 100)).toThrow();
    expect(() => tokens.signRecipient(ID, -1)).toThrow();
  });

  it('verify only what the service signed, under its key', () => {
    const token = tokens.sign(ID);
    const mac = token.slice(token.lastIndexOf('-') + 1);
    expect(tokens.verify(`em_01jbq7m3k2x9f5v8r4t6w0y2zd-${mac}`)).toBeUndefined();
    expect(tokens.verify(`${token.slice(0, -1)}${token.endsWith('a') ? 'b' : 'a'}`)).toBeUndefined();
    expect(tokens.verify(token.slice(0, -1))).toBeUndefined();
    expect(tokens.verify(ID)).toBeUndefined();
    expect(tokens.verify('')).toBeUndefined();
    expect(tokens.verify(`-${mac}`)).toBeUndefined();
    expect(tokens.verify(`${token}${'a'.repeat(MAX_TOKEN_CHARS)}`)).toBeUndefined();
    expect(createReportTokens('another-installation-secret').verify(token)).toBeUndefined();
  });

  it('refuse to sign what is no email id, and short secrets', () => {
    expect(() => tokens.sign('em_X')).toThrow();
    expect(() => tokens.sign('a-b')).toThrow();
    expect(() => tokens.sign(`em_${'a'.repeat(40)}`)).toThrow();
    expect(() => createReportTokens('short')).toThrow();
  });
});

describe('the VERP return path b-<token>@<domain>', () => {
  it('is made for an email and read back at any domain', () => {
    const address = makeReturnPath(tokens, ID, 0, 'rp.example.com');
    expect(address).toBe(`b-${tokens.signRecipient(ID, 0)}@rp.example.com`);
    // Even for the 50th recipient the local part stays within SMTP's 64 characters.
    expect(makeReturnPath(tokens, ID, 49, 'rp.example.com').split('@')[0]!.length).toBeLessThanOrEqual(64);
    expect(parseReturnPath(tokens, address)).toEqual({ emailId: ID, recipient: 0 });
    expect(parseReturnPath(tokens, address.toUpperCase())).toEqual({ emailId: ID, recipient: 0 });
    expect(parseReturnPath(tokens, address.replace('rp.example.com', 'bounces.other.example'))).toEqual({
      emailId: ID,
      recipient: 0,
    });
  });

  it('names nothing when its token is forged, or it is no return path', () => {
    const address = makeReturnPath(tokens, ID, 0, 'rp.example.com');
    expect(parseReturnPath(tokens, address.replace(ID, 'em_01jbq7m3k2x9f5v8r4t6w0y2zd'))).toBeUndefined();
    expect(parseReturnPath(tokens, `b-${ID}@rp.example.com`)).toBeUndefined();
    expect(parseReturnPath(tokens, 'fbl@example.com')).toBeUndefined();
    expect(parseReturnPath(tokens, tokens.sign(ID))).toBeUndefined();
    expect(isReturnPath(address)).toBe(true);
    expect(isReturnPath('B-x@example.com')).toBe(true);
    expect(isReturnPath('bob@example.com')).toBe(false);
    expect(isReturnPath('b-@example.com')).toBe(false);
  });

  it('refuses a domain that is none', () => {
    expect(() => makeReturnPath(tokens, ID, 0, '')).toThrow();
    expect(() => makeReturnPath(tokens, ID, 0, 'a@b')).toThrow();
  });
});
