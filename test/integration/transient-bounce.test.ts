import { beforeAll, describe, expect, it } from 'vitest';
import { admin } from '../helpers/admin-fixtures.js';
import { call, eventually, validEmail } from '../helpers/http.js';
import { useStack } from '../helpers/use-stack.js';

/** Temporary SMTP refusals from a real smtp-server, with a short retry budget (3 retries: 1 s, 1 s, then 2 s apart). */
const stack = useStack({ MAILER_SMTP_RETRY_ATTEMPTS: '3', MAILER_SMTP_RETRY_FIRST_SECONDS: '1' });
const tries = new Map<string, number[]>();

beforeAll(async () => {
  stack.sink.refuseRecipient = (address) => {
    const seen = [...(tries.get(address) ?? []), Date.now()];
    tries.set(address, seen);
    if (address.startsWith('full')) return '452 4.2.2 <full>: Mailbox full, try again later';
    if (address.startsWith('flaky') && seen.length === 1) return '421 4.4.2 connection dropped, try again';
    return undefined;
  };
});

type Detail = { email: { status: string }; events: { type: string; data: Record<string, unknown> }[] };

describe('temporary SMTP failures', () => {
  it('are retried on the budget (1 s, 1 s, 2 s) and end as a Transient bounce with the last reply; the address is not suppressed', async () => {
    const res = await call<{ id: string }>('POST', `${stack.api}/emails`, {
      token: stack.apiKey,
      body: validEmail({ to: ['full@example.net'] }),
    });
    const detail = await eventually(
      async () => {
        const r = await admin<Detail>(stack, 'GET', `/emails/${res.body.id}`);
        return r.body.email.status === 'bounced' ? r.body : undefined;
      },
      30_000,
      200,
    );
    const at = tries.get('full@example.net')!;
    expect(at).toHaveLength(4);
    expect(at[1]! - at[0]!).toBeGreaterThanOrEqual(950);
    expect(at[2]! - at[1]!).toBeGreaterThanOrEqual(950);
    expect(at[3]! - at[2]!).toBeGreaterThanOrEqual(1950);
    expect(detail.events.map((e) => e.type)).toEqual(['send', 'bounce']);
    expect(detail.events[1]!.data).toEqual({
      bounce_type: 'Transient',
      bounce_subtype: 'General',
      bounced_recipients: [
        {
          email_address: 'full@example.net',
          status: '4.2.2',
          diagnostic_code: expect.stringContaining('Mailbox full'),
        },
      ],
    });
    const supp = await admin<{ suppressions: unknown[] }>(stack, 'GET', `/accounts/${stack.accountId}/suppressions`);
    expect(supp.body.suppressions).toEqual([]);
  });

  it('an email refused once and accepted on its retry is delivered, with no bounce', async () => {
    const res = await call<{ id: string }>('POST', `${stack.api}/emails`, {
      token: stack.apiKey,
      body: validEmail({ to: ['flaky@example.net'], subject: 'flaky' }),
    });
    const detail = await eventually(
      async () => {
        const r = await admin<Detail>(stack, 'GET', `/emails/${res.body.id}`);
        return r.body.email.status === 'delivered' ? r.body : undefined;
      },
      30_000,
      200,
    );
    expect(detail.events.map((e) => e.type)).toEqual(['send', 'delivery']);
    expect(tries.get('flaky@example.net')).toHaveLength(2);
    expect(stack.sink.messages.filter((m) => m.parsed.subject === 'flaky')).toHaveLength(1);
  });
});
