import { describe, expect, it } from 'vitest';
import { TXT_STRING_MAX, txtStrings, zoneValue } from '../../src/domain/zone-value.js';

/** Reads a zone file's quoted character strings back (the test's own reader, not the code's). */
function unquote(zone: string): string[] {
  const strings = [...zone.matchAll(/"((?:[^"\\]|\\.)*)"/g)].map((m) => m[1]!.replace(/\\(.)/g, '$1'));
  // Nothing but quoted strings separated by single spaces.
  expect(zone.replace(/"((?:[^"\\]|\\.)*)"/g, 'S')).toMatch(/^S( S)*$/);
  return strings;
}

const dkim = (keyLength: number) =>
  `v=DKIM1; k=rsa; p=${'MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8A'.repeat(20).slice(0, keyLength)}`;

describe('txtStrings: a TXT value as DNS character strings', () => {
  it.each([0, 1, 254, 255, 256, 410, 510, 511, 765, 766])('a value of %i characters', (length) => {
    const value = 'x'.repeat(length);
    const strings = txtStrings(value);
    expect(strings.join('')).toBe(value);
    // Every string but the last exactly 255; the last 1 to 255 (one empty string for an empty value).
    for (const s of strings.slice(0, -1)) expect(s).toHaveLength(TXT_STRING_MAX);
    expect(strings.at(-1)!.length).toBeLessThanOrEqual(TXT_STRING_MAX);
    expect(strings).toHaveLength(Math.max(1, Math.ceil(length / TXT_STRING_MAX)));
    if (length > 0) expect(strings.at(-1)!.length).toBeGreaterThan(0);
  });
});

describe('zoneValue: a record value as a zone file takes it', () => {
  it("splits a 2048-bit key's DKIM value into quoted 255-character strings whose concatenation is the value", () => {
    const value = dkim(392);
    expect(value.length).toBeGreaterThan(TXT_STRING_MAX);
    const zone = zoneValue('TXT', value);
    expect(zone).toBe(`"${value.slice(0, 255)}" "${value.slice(255)}"`);
    const strings = unquote(zone);
    expect(strings.map((s) => s.length)).toEqual([255, value.length - 255]);
    expect(strings.join('')).toBe(value);
  });

  it('quotes a short TXT value as one string, and leaves another type as it is', () => {
    expect(zoneValue('TXT', 'v=spf1 a:mail.example.com ~all')).toBe('"v=spf1 a:mail.example.com ~all"');
    expect(zoneValue('MX', '10 mail.example.com')).toBe('10 mail.example.com');
  });

  it('escapes quotes and backslashes inside a string, and splits the value before escaping', () => {
    const value = `${'a'.repeat(254)}"b\\c`;
    const zone = zoneValue('TXT', value);
    expect(zone).toBe(`"${'a'.repeat(254)}\\"" "b\\\\c"`);
    expect(unquote(zone).join('')).toBe(value);
  });
});
