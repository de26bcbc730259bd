import { describe, expect, it } from 'vitest';
import { SENT_ID, TEST_KEY } from '../../helpers/fake-api-deps.js';
import { buildTestRestApp } from '../../helpers/in-memory-apps.js';

/** The REST adapter in memory: Fastify's `inject`, the real handlers and guard, fakes behind them. */

const email = { from: 'Sender <sender@example.com>', to: ['a@example.net'], subject: 'Hello', text: 'Hi' };

describe('REST app (in memory)', () => {
  it("refuses a request without a key with 401 in the spec's shape, before the handler runs", async () => {
    const { app, sent } = await buildTestRestApp();
    const res = await app.inject({ method: 'POST', url: '/v1/mail/emails', payload: email });
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual({ error: 'unauthorized', message: 'Invalid or missing API key' });
    expect(sent).toEqual([]);
  });

  it('answers a body with an unknown field 400 validation error, naming the field', async () => {
    const { app, sent } = await buildTestRestApp();
    const res = await app.inject({
      method: 'POST',
      url: '/v1/mail/emails',
      headers: { authorization: `Bearer ${TEST_KEY}` },
      payload: { ...email, subjcet: 'typo' },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ error: 'validation error', message: expect.stringContaining('subjcet') });
    expect(sent).toEqual([]);
  });

  it("encodes the handler's answer in the spec's JSON: snake_case, implicit defaults written, RateLimit-* headers", async () => {
    const { app, sent } = await buildTestRestApp();
    const res = await app.inject({
      method: 'POST',
      url: '/v1/mail/emails',
      headers: { authorization: `Bearer ${TEST_KEY}` },
      payload: email,
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ id: SENT_ID, message_id: '', status: 'pending' });
    expect(res.headers['ratelimit-limit']).toBeDefined();
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatchObject({ from: email.from, to: email.to, subject: 'Hello', text: 'Hi' });
  });
});
