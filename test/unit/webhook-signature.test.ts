import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { signatureFor, verifyWebhookSignature } from '../../src/webhooks/signature.js';

const secret = 'whsec_test-secret';
const body = '{"event":"delivery","timestamp":"2026-11-21T12:00:00.000Z","data":{"smtp_response":"250 ok"}}';
const ts = 1_795_000_000;

/** The spec's definition, computed independently of the code under test. */
const independent = (s: string, t: number | string, raw: string) =>
  `sha256=${crypto.createHmac('sha256', s).update(`${t}.${raw}`).digest('hex')}`;

describe('webhook signatures', () => {
  it('signs exactly as the spec defines: HMAC-SHA256 hex over "{timestamp}.{raw body}"', () => {
    expect(signatureFor(secret, ts, body)).toBe(independent(secret, ts, body));
    expect(signatureFor(secret, String(ts), Buffer.from(body))).toBe(independent(secret, ts, body));
  });

  const headers = (sig: string, t: number | string = ts) => ({
    'X-Mail-Signature': sig,
    'X-Mail-Timestamp': String(t),
  });

  it('accepts a genuine request (plain header objects and Headers)', () => {
    const sig = independent(secret, ts, body);
    expect(verifyWebhookSignature({ secret, headers: headers(sig), rawBody: body, now: ts + 10 })).toEqual({
      ok: true,
    });
    const h = new Headers(headers(sig));
    expect(verifyWebhookSignature({ secret, headers: h, rawBody: Buffer.from(body), now: ts })).toEqual({ ok: true });
  });

  it.each([
    [
      'a body changed by one byte',
      () =>
        verifyWebhookSignature({
          secret,
          headers: headers(independent(secret, ts, body)),
          rawBody: body.replace('250', '251'),
          now: ts,
        }),
      'signature mismatch',
    ],
    [
      'another secret',
      () =>
        verifyWebhookSignature({
          secret: 'whsec_other',
          headers: headers(independent(secret, ts, body)),
          rawBody: body,
          now: ts,
        }),
      'signature mismatch',
    ],
    [
      'a timestamp swapped after signing',
      () =>
        verifyWebhookSignature({
          secret,
          headers: headers(independent(secret, ts, body), ts + 1),
          rawBody: body,
          now: ts,
        }),
      'signature mismatch',
    ],
    [
      'a timestamp older than 5 minutes',
      () =>
        verifyWebhookSignature({
          secret,
          headers: headers(independent(secret, ts, body)),
          rawBody: body,
          now: ts + 301,
        }),
      'stale timestamp',
    ],
    [
      'a timestamp from the future',
      () =>
        verifyWebhookSignature({
          secret,
          headers: headers(independent(secret, ts, body)),
          rawBody: body,
          now: ts - 301,
        }),
      'stale timestamp',
    ],
    [
      'no signature header',
      () => verifyWebhookSignature({ secret, headers: { 'X-Mail-Timestamp': String(ts) }, rawBody: body, now: ts }),
      'missing headers',
    ],
    [
      'a signature without the sha256= prefix',
      () =>
        verifyWebhookSignature({
          secret,
          headers: headers(independent(secret, ts, body).slice(7)),
          rawBody: body,
          now: ts,
        }),
      'malformed',
    ],
  ])('refuses %s', (_name, run, reason) => {
    expect(run()).toEqual({ ok: false, reason });
  });

  it('honours a custom tolerance', () => {
    const sig = independent(secret, ts, body);
    expect(
      verifyWebhookSignature({ secret, headers: headers(sig), rawBody: body, now: ts + 30, toleranceSeconds: 10 }),
    ).toEqual({ ok: false, reason: 'stale timestamp' });
  });
});

describe('webhook signatures during a secret rotation', () => {
  const previous = 'whsec_previous-secret';
  const both = (t = ts) => ({
    'X-Mail-Signature': independent(secret, t, body),
    'X-Mail-Signature-Previous': independent(previous, t, body),
    'X-Mail-Timestamp': String(t),
  });

  it("accepts a receiver holding either secret: X-Mail-Signature-Previous is the previous secret's signature", () => {
    expect(verifyWebhookSignature({ secret, headers: both(), rawBody: body, now: ts })).toEqual({ ok: true });
    expect(verifyWebhookSignature({ secret: previous, headers: both(), rawBody: body, now: ts })).toEqual({ ok: true });
    expect(verifyWebhookSignature({ secret: 'whsec_third', headers: both(), rawBody: body, now: ts })).toEqual({
      ok: false,
      reason: 'signature mismatch',
    });
    expect(verifyWebhookSignature({ secret: previous, headers: both(), rawBody: `${body} `, now: ts })).toEqual({
      ok: false,
      reason: 'signature mismatch',
    });
    expect(verifyWebhookSignature({ secret: previous, headers: both(), rawBody: body, now: ts + 301 })).toEqual({
      ok: false,
      reason: 'stale timestamp',
    });
  });
});
