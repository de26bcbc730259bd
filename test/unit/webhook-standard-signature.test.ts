import crypto from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { webhookHeaders } from '../../src/webhooks/request.js';
import { standardKeyOf, standardSignatureFor, standardWebhooksSecret } from '../../src/webhooks/standard-signature.js';

const body = '{"event":"send","timestamp":"2026-11-21T12:00:00.000Z","data":{}}';
const bytes = crypto.createHash('sha256').update('fixed key').digest();
const secret = `whsec_${bytes.toString('base64')}`;

describe('Standard Webhooks signing', () => {
  it('is HMAC-SHA256 keyed with the secret\'s bytes over "{id}.{timestamp}.{body}", base64 after v1,', () => {
    const want = `v1,${crypto.createHmac('sha256', bytes).update(`whd_1.1795000000.${body}`).digest('base64')}`;
    expect(standardSignatureFor(secret, 'whd_1', 1795000000, body)).toBe(want);
    expect(new Webhook(secret).sign('whd_1', new Date(1795000000_000), body)).toBe(want);
  });

  it('reads both base64 alphabets, so old whsec_<base64url> secrets keep their key; the library gets the standard spelling', () => {
    const old = `whsec_${bytes.toString('base64url')}`;
    expect(standardKeyOf(old)).toEqual(bytes);
    expect(standardKeyOf(secret)).toEqual(bytes);
    expect(standardWebhooksSecret(old)).toBe(secret.replace(/=+$/, ''));
    expect(Buffer.from(new Webhook(standardWebhooksSecret(old)).sign('x', new Date(0), body))).toEqual(
      Buffer.from(standardSignatureFor(old, 'x', 0, body)),
    );
    expect(standardWebhooksSecret(secret)).toBe(secret);
  });

  it('headers: one v1 signature per secret, each verified by the reference library', () => {
    const previous = `whsec_${crypto.randomBytes(32).toString('base64')}`;
    const now = new Date();
    const h = webhookHeaders([secret, previous], 'send', body, 'whd_abc', now);
    expect(h['webhook-id']).toBe('whd_abc');
    expect(h['webhook-timestamp']).toBe(String(Math.floor(now.getTime() / 1000)));
    expect(h['webhook-signature']!.split(' ')).toHaveLength(2);
    expect(h['x-mail-signature-previous']).toMatch(/^sha256=[0-9a-f]{64}$/);
    for (const s of [secret, previous]) expect(new Webhook(s).verify(body, h)).toEqual(JSON.parse(body));
    expect(() => new Webhook(`whsec_${crypto.randomBytes(32).toString('base64')}`).verify(body, h)).toThrow(
      /No matching signature/,
    );
    const single = webhookHeaders([secret], 'send', body, 'whd_abc', now);
    expect(single).not.toHaveProperty('x-mail-signature-previous');
    expect(single['x-mail-signature']).toBe(h['x-mail-signature']);
  });
});
