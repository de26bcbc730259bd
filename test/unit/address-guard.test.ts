import { describe, expect, it } from 'vitest';
import { checkWebhookUrl, isPrivateAddress } from '../../src/webhooks/address-guard.js';

describe('isPrivateAddress', () => {
  it.each([
    '8.8.8.8',
    '1.1.1.1',
    '93.184.215.14',
    '172.15.255.255',
    '172.32.0.1',
    '2606:4700:4700::1111',
    '2a00:1450:4001::200e',
    '::ffff:8.8.8.8',
  ])('public: %s', (address) => {
    expect(isPrivateAddress(address)).toBe(false);
  });

  it.each([
    '127.0.0.1',
    '127.255.0.1',
    '10.0.0.1',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '224.0.0.1',
    '255.255.255.255',
    '::1',
    '::',
    'fe80::1',
    'fd12:3456::1',
    'ff02::1',
    '::ffff:127.0.0.1',
    '::ffff:10.0.0.1',
    '::ffff:7f00:1',
    '64:ff9b::a00:1',
    'not-an-ip',
  ])('private, loopback or reserved: %s', (address) => {
    expect(isPrivateAddress(address)).toBe(true);
  });
});

describe('checkWebhookUrl (IP literals: no DNS)', () => {
  it('accepts a public address', async () => {
    expect(await checkWebhookUrl('https://93.184.215.14/hook', false)).toEqual({
      ok: true,
      addresses: ['93.184.215.14'],
    });
    expect(await checkWebhookUrl('https://[2606:4700:4700::1111]/hook', false)).toEqual({
      ok: true,
      addresses: ['2606:4700:4700::1111'],
    });
  });

  it('refuses loopback and private addresses unless allowed', async () => {
    for (const url of [
      'http://127.0.0.1:8080/h',
      'http://[::1]/h',
      'http://10.0.0.5/h',
      'http://169.254.169.254/latest',
    ]) {
      const refused = await checkWebhookUrl(url, false);
      expect(refused.ok, url).toBe(false);
      expect((await checkWebhookUrl(url, true)).ok, url).toBe(true);
    }
  });

  it.each(['not a url', 'ftp://93.184.215.14/', 'file:///etc/passwd', 'https://u:p@93.184.215.14/'])(
    'refuses %j',
    async (url) => {
      expect((await checkWebhookUrl(url, true)).ok).toBe(false);
    },
  );
});
