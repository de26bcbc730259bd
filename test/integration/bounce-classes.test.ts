import { beforeAll, describe, expect, it } from 'vitest';
import { admin } from '../helpers/admin-fixtures.js';
import { call, eventually, validEmail } from '../helpers/http.js';
import { useStack } from '../helpers/use-stack.js';

/**
 * What each kind of 5xx becomes, through the real stack and a real smtp-server (domain/bounce-class.ts):
 * a full mailbox is retried and ends Transient, a policy block is Transient at once, neither suppresses;
 * only a dead address is Permanent and suppressed. A short retry budget: 2 retries, 1 s apart.
 */
const stack = useStack({ MAILER_SMTP_RETRY_ATTEMPTS: '2', MAILER_SMTP_RETRY_FIRST_SECONDS: '1' });
const tries = new Map<string, number>();

beforeAll(async () => {
  stack.sink.refuseRecipient = (address) => {
    tries.set(address, (tries.get(address) ?? 0) + 1);
    if (address.startsWith('full')) return "552 5.2.2 The recipient's inbox is out of storage space";
    if (address.startsWith('blocked'))
      return '550 5.7.1 Our system has detected that this message is likely unsolicited mail';
    if (address.startsWith('gone')) return '550 5.1.1 The email account that you tried to reach does not exist';
    return undefined;
  };
});

type Detail = { email: { status: string }; events: { type: string; data: Record<string, unknown> }[] };

async function settled(to: string): Promise<Detail> {
  const res = await call<{ id: string }>('POST', `${stack.api}/emails`, {
    token: stack.apiKey,
    body: validEmail({ to: [to], subject: to }),
  });
  expect(res.status).toBe(200);
  return eventually(
    async () => {
      const r = await admin<Detail>(stack, 'GET', `/emails/${res.body.id}`);
      return r.body.email.status === 'bounced' ? r.body : undefined;
    },
    30_000,
    200,
  );
}

const suppressed = async () =>
  (
    await admin<{ suppressions: { email_address: string }[] }>(
      stack,
      'GET',
      `/accounts/${stack.accountId}/suppressions`,
    )
  ).body.suppressions.map((s) => s.email_address);

describe('bounce classes', () => {
  it('552 5.2.2 (mailbox full) is retried on the budget, then a Transient bounce; the address is not suppressed', async () => {
    const detail = await settled('full@example.net');
    expect(tries.get('full@example.net')).toBe(3);
    expect(detail.events.map((e) => e.type)).toEqual(['send', 'bounce']);
    expect(detail.events[1]!.data).toEqual({
      bounce_type: 'Transient',
      bounce_subtype: 'General',
      bounced_recipients: [
        {
          email_address: 'full@example.net',
          status: '5.2.2',
          diagnostic_code: expect.stringContaining('out of storage space'),
        },
      ],
    });
    expect(await suppressed()).not.toContain('full@example.net');
  });

  it('550 5.7.1 (spam block) is not retried: a Transient bounce at once, and the address is not suppressed', async () => {
    const detail = await settled('blocked@example.net');
    expect(tries.get('blocked@example.net')).toBe(1);
    expect(detail.events[1]!.data).toMatchObject({
      bounce_type: 'Transient',
      bounced_recipients: [expect.objectContaining({ status: '5.7.1' })],
    });
    expect(await suppressed()).not.toContain('blocked@example.net');
  });

  it('550 5.1.1 (no such user) is a Permanent bounce at once, and the address is suppressed', async () => {
    const detail = await settled('gone@example.net');
    expect(tries.get('gone@example.net')).toBe(1);
    expect(detail.events[1]!.data).toMatchObject({
      bounce_type: 'Permanent',
      bounced_recipients: [expect.objectContaining({ status: '5.1.1' })],
    });
    expect(await suppressed()).toContain('gone@example.net');
  });
});
