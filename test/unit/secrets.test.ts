import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  digestsEqual,
  generateApiKey,
  generateToken,
  generateWebhookSecret,
  hashSecret,
  looksLikeApiKey,
  secretsEqual,
  sha256,
} from '../../src/services/secrets.js';

describe('API keys', () => {
  it('are mk_ and 43 base64url characters, with their SHA-256 and a short prefix', () => {
    const { key, hash, prefix } = generateApiKey();
    expect(key).toMatch(/^mk_[A-Za-z0-9_-]{43}$/);
    expect(hash.equals(crypto.createHash('sha256').update(key).digest())).toBe(true);
    expect(prefix).toBe(key.slice(0, 10));
    expect(looksLikeApiKey(key)).toBe(true);
  });

  it('are different every time', () => {
    const keys = new Set(Array.from({ length: 100 }, () => generateApiKey().key));
    expect(keys.size).toBe(100);
  });

  it.each([
    '',
    'mk_',
    `mk_${'a'.repeat(42)}`,
    `mk_${'a'.repeat(44)}`,
    `xx_${'a'.repeat(43)}`,
    `mk_${'a'.repeat(42)}=`,
    ` mk_${'a'.repeat(43)}`,
    `mk_${'a'.repeat(43)} `,
  ])('looksLikeApiKey refuses %j', (value) => {
    expect(looksLikeApiKey(value)).toBe(false);
  });
});

describe('comparisons', () => {
  it('secretsEqual compares any lengths', () => {
    expect(secretsEqual('adm_token', 'adm_token')).toBe(true);
    expect(secretsEqual('adm_token', 'adm_tokeN')).toBe(false);
    expect(secretsEqual('adm_token', 'adm_token_longer')).toBe(false);
    expect(secretsEqual('', '')).toBe(true);
  });

  it('digestsEqual refuses different lengths instead of throwing', () => {
    const a = hashSecret('a');
    expect(digestsEqual(a, hashSecret('a'))).toBe(true);
    expect(digestsEqual(a, hashSecret('b'))).toBe(false);
    expect(digestsEqual(a, a.subarray(0, 16))).toBe(false);
  });

  it('sha256 is the SHA-256 of strings and bytes', () => {
    expect(sha256('abc').toString('hex')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(sha256(new Uint8Array([0x61, 0x62, 0x63])).toString('hex')).toBe(
      'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad',
    );
  });
});

describe('other secrets', () => {
  it('webhook secrets are whsec_ and 32 random bytes in standard base64 (the Standard Webhooks format)', () => {
    const s = generateWebhookSecret();
    expect(s).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(s.slice(6), 'base64')).toHaveLength(32);
    expect(generateWebhookSecret()).not.toBe(s);
  });

  it('tokens are base64url of the asked number of bytes', () => {
    expect(generateToken()).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(generateToken(16), 'base64url')).toHaveLength(16);
  });
});
