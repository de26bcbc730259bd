import { beforeAll, describe, expect, it } from 'vitest';
import { HEALTH_POLICY } from '../../src/domain/health.js';
import { admin, createSender } from '../helpers/admin-fixtures.js';
import { call, eventually, validEmail } from '../helpers/http.js';
import { useStack } from '../helpers/use-stack.js';

/** Suppressions and the account health policy against the real stack and a real SMTP server that refuses. */
const stack = useStack();

beforeAll(async () => {
  stack.sink.refuseRecipient = (a) =>
    a.toLowerCase().startsWith('bounce') ? `550 5.1.1 <${a}>: Recipient address rejected: User unknown` : undefined;
});

type Account = { status: string; daily_quota: number; bounce_rate: number; complaint_rate: number; sent_today: number };

async function sendBatch(key: string, from: string, recipients: string[]): Promise<string> {
  const res = await call<{ job_id: string }>('POST', `${stack.api}/emails/batch`, {
    token: key,
    body: { emails: recipients.map((to, i) => validEmail({ from, to: [to], subject: `batch ${i}` })) },
  });
  expect(res.status).toBe(200);
  const jobId = res.body.job_id;
  await eventually(
    async () => {
      const r = await call<{ status: string }>('GET', `${stack.api}/emails/batch/${jobId}`, { token: key });
      return r.body.status === 'completed' || r.body.status === 'failed';
    },
    30_000,
    100,
  );
  return jobId;
}

const recipients = (n: number, bounces: string[]) => [
  ...Array.from({ length: n - bounces.length }, (_, i) => `ok${i}@example.net`),
  ...bounces,
];

describe('suppression', () => {
  it('a hard-bounced address is suppressed: later emails to it never reach SMTP, bounce as Suppressed and do not count; removing it sends again', async () => {
    const s = await createSender(stack, 'supp', 'supp.example');
    const first = await call<{ id: string }>('POST', `${stack.api}/emails`, {
      token: s.key,
      body: validEmail({ from: 'a@supp.example', to: ['Bounce-Me@Example.net'] }),
    });
    await eventually(
      async () =>
        (await call<{ status: string }>('GET', `${stack.api}/emails/${first.body.id}`, { token: s.key })).body
          .status === 'bounced',
    );
    const listed = await admin<{
      suppressions: {
        id: string;
        email_address: string;
        reason: string;
        email_id: string;
        created_at: string;
        scope: string;
        topic: string | null;
      }[];
    }>(stack, 'GET', `/accounts/${s.accountId}/suppressions`);
    expect(listed.body.suppressions).toEqual([
      {
        id: expect.stringMatching(/^sup_/),
        email_address: 'bounce-me@example.net',
        reason: 'bounce',
        email_id: first.body.id,
        created_at: expect.any(String),
        scope: 'all',
        topic: null,
      },
    ]);

    const atSinkBefore = stack.sink.messages.length;
    const second = await call<{ id: string }>('POST', `${stack.api}/emails`, {
      token: s.key,
      body: validEmail({ from: 'a@supp.example', to: ['bounce-me@example.net'], subject: 'suppressed' }),
    });
    const detail = await eventually(async () => {
      const r = await admin<{ email: { status: string }; events: { type: string; data: Record<string, unknown> }[] }>(
        stack,
        'GET',
        `/emails/${second.body.id}`,
      );
      return r.body.email.status === 'bounced' ? r.body : undefined;
    });
    expect(detail.events.map((e) => e.type)).toEqual(['bounce']);
    expect(detail.events[0]!.data).toMatchObject({
      bounce_type: 'Permanent',
      bounce_subtype: 'Suppressed',
      bounced_recipients: [expect.objectContaining({ email_address: 'bounce-me@example.net' })],
    });
    expect(stack.sink.messages.length).toBe(atSinkBefore);

    // One suppressed recipient among others: the others get the email, the suppressed one is left out of the envelope.
    const mixed = await call<{ id: string }>('POST', `${stack.api}/emails`, {
      token: s.key,
      body: validEmail({ from: 'a@supp.example', to: ['fine@example.net', 'bounce-me@example.net'], subject: 'mixed' }),
    });
    const arrived = await eventually(async () => stack.sink.messages.find((m) => m.parsed.subject === 'mixed'));
    expect(arrived.envelopeTo).toEqual(['fine@example.net']);
    const mixedDetail = await eventually(async () => {
      const r = await admin<{ email: { status: string }; events: { type: string; data: Record<string, unknown> }[] }>(
        stack,
        'GET',
        `/emails/${mixed.body.id}`,
      );
      return r.body.events.length === 3 ? r.body : undefined;
    });
    expect(mixedDetail.email.status).toBe('delivered');
    expect(mixedDetail.events.map((e) => [e.type, e.data.bounce_subtype])).toEqual([
      ['send', undefined],
      ['delivery', undefined],
      ['bounce', 'Suppressed'],
    ]);

    const account = await admin<Account>(stack, 'GET', `/accounts/${s.accountId}`);
    expect(account.body.bounce_rate).toBe(0.5);

    await admin(stack, 'DELETE', `/suppressions/${listed.body.suppressions[0]!.id}`);
    expect(
      (await admin<{ suppressions: unknown[] }>(stack, 'GET', `/accounts/${s.accountId}/suppressions`)).body
        .suppressions,
    ).toEqual([]);
    const again = await call('DELETE', `${stack.admin}/suppressions/${listed.body.suppressions[0]!.id}`, {
      token: 'x',
    });
    expect(again.status).toBe(401);
    const third = await call<{ id: string }>('POST', `${stack.api}/emails`, {
      token: s.key,
      body: validEmail({ from: 'a@supp.example', to: ['bounce-me@example.net'], subject: 'unsuppressed' }),
    });
    const thirdDetail = await eventually(async () => {
      const r = await admin<{ email: { status: string }; events: { type: string; data: Record<string, unknown> }[] }>(
        stack,
        'GET',
        `/emails/${third.body.id}`,
      );
      return r.body.email.status === 'bounced' ? r.body : undefined;
    });
    expect(thirdDetail.events.map((e) => [e.type, e.data.bounce_subtype])).toEqual([
      ['send', undefined],
      ['bounce', 'General'],
    ]);
  });

  it('suppressions are per account: another account still sends to the address', async () => {
    const a = await createSender(stack, 'suppa', 'suppa.example');
    const b = await createSender(stack, 'suppb', 'suppb.example');
    stack.sink.refuseRecipient = (addr) =>
      addr.startsWith('bounce') || addr === 'once@example.net' ? `550 5.1.1 <${addr}>: User unknown` : undefined;
    const first = await call<{ id: string }>('POST', `${stack.api}/emails`, {
      token: a.key,
      body: validEmail({ from: 'x@suppa.example', to: ['once@example.net'] }),
    });
    await eventually(
      async () =>
        (await call<{ status: string }>('GET', `${stack.api}/emails/${first.body.id}`, { token: a.key })).body
          .status === 'bounced',
    );
    stack.sink.refuseRecipient = (addr) =>
      addr.startsWith('bounce') ? `550 5.1.1 <${addr}>: User unknown` : undefined;
    const other = await call<{ id: string }>('POST', `${stack.api}/emails`, {
      token: b.key,
      body: validEmail({ from: 'x@suppb.example', to: ['once@example.net'], subject: 'b to once' }),
    });
    await eventually(async () => stack.sink.messages.find((m) => m.parsed.subject === 'b to once'));
    // The outcome is recorded just after the server's 250.
    await eventually(
      async () =>
        (await call<{ status: string }>('GET', `${stack.api}/emails/${other.body.id}`, { token: b.key })).body
          .status === 'delivered',
    );
    expect(
      (await admin<{ suppressions: unknown[] }>(stack, 'GET', `/accounts/${b.accountId}/suppressions`)).body
        .suppressions,
    ).toEqual([]);
  });
});

describe('account health', () => {
  it(`healthy → review at ${HEALTH_POLICY.bounceRate * 100} % bounces over ${HEALTH_POLICY.minVolume} emails (quota halved) → paused if it stays there; paused sends are 403`, async () => {
    const s = await createSender(stack, 'health', 'health.example');
    const before = await admin<Account>(stack, 'GET', `/accounts/${s.accountId}`);
    expect(before.body).toMatchObject({ status: 'healthy', daily_quota: 1000, bounce_rate: 0 });

    // Below the minimum volume nothing is judged, however bad: 2 of 10 bounced.
    await sendBatch(s.key, 'h@health.example', recipients(10, ['bounce-h1@example.net', 'bounce-h2@example.net']));
    expect((await admin<Account>(stack, 'GET', `/accounts/${s.accountId}`)).body).toMatchObject({
      status: 'healthy',
      bounce_rate: 0.2,
    });

    // 40 more with no bounce: 2 of 50 is exactly 4 %.
    await sendBatch(s.key, 'h@health.example', recipients(40, []));
    const review = await eventually(async () => {
      const r = await admin<Account>(stack, 'GET', `/accounts/${s.accountId}`);
      return r.body.status === 'review' ? r.body : undefined;
    });
    expect(review.daily_quota).toBe(500);
    // The review window starts afresh.
    expect(review.bounce_rate).toBe(0);

    // Still sending (review allows it), and still bouncing: paused.
    await sendBatch(
      s.key,
      'h@health.example',
      recipients(50, ['bounce-h3@example.net', 'bounce-h4@example.net', 'bounce-h5@example.net']),
    );
    await eventually(
      async () => (await admin<Account>(stack, 'GET', `/accounts/${s.accountId}`)).body.status === 'paused',
    );
    const refused = await call('POST', `${stack.api}/emails`, {
      token: s.key,
      body: validEmail({ from: 'h@health.example' }),
    });
    expect(refused.status).toBe(403);
    expect(refused.body).toEqual({ error: 'permission denied', message: expect.stringContaining('paused') });

    // Only an operator brings it back; healthy restores the quota the policy reduced.
    const restored = await admin<Account>(stack, 'PATCH', `/accounts/${s.accountId}`, { status: 'healthy' });
    expect(restored.body).toMatchObject({ status: 'healthy', daily_quota: 1000 });
    expect(
      (await call('POST', `${stack.api}/emails`, { token: s.key, body: validEmail({ from: 'h@health.example' }) }))
        .status,
    ).toBe(200);
  }, 90_000);

  it('review → healthy after 24 hours without bounces or complaints, with the quota given back (the sweep)', async () => {
    const s = await createSender(stack, 'recover', 'recover.example');
    await sendBatch(
      s.key,
      'r@recover.example',
      recipients(50, ['bounce-r1@example.net', 'bounce-r2@example.net', 'bounce-r3@example.net']),
    );
    await eventually(
      async () => (await admin<Account>(stack, 'GET', `/accounts/${s.accountId}`)).body.status === 'review',
    );
    // A day passes: move the account's clock back instead of waiting.
    await stack.mailer
      .sql`update accounts set status_changed_at = status_changed_at - interval '25 hours' where id = ${s.accountId}`;
    await stack.mailer
      .sql`update events set created_at = created_at - interval '25 hours' where account_id = ${s.accountId}`;
    const healthy = await eventually(
      async () => {
        const r = await admin<Account>(stack, 'GET', `/accounts/${s.accountId}`);
        return r.body.status === 'healthy' ? r.body : undefined;
      },
      40_000,
      500,
    );
    expect(healthy.daily_quota).toBe(1000);
  }, 90_000);

  it('emails accepted before an account was paused are rejected at delivery, not sent', async () => {
    const s = await createSender(stack, 'rejected', 'rejected.example');
    const at = new Date(Date.now() + 2500).toISOString();
    const scheduled = await call<{ id: string }>('POST', `${stack.api}/emails/schedule`, {
      token: s.key,
      body: validEmail({ from: 'x@rejected.example', subject: 'paused meanwhile', scheduled_at: at }),
    });
    expect(scheduled.status).toBe(200);
    await admin(stack, 'PATCH', `/accounts/${s.accountId}`, { status: 'paused' });
    const email = await eventually(
      async () => {
        const r = await admin<{ data: { id: string; status: string }[] }>(
          stack,
          'GET',
          `/accounts/${s.accountId}/emails?job_id=${scheduled.body.id}`,
        );
        return r.body.data[0]?.status === 'bounced' ? r.body.data[0] : undefined;
      },
      30_000,
      200,
    );
    const detail = await admin<{ events: { type: string; data: Record<string, unknown> }[] }>(
      stack,
      'GET',
      `/emails/${email.id}`,
    );
    expect(detail.body.events).toEqual([
      expect.objectContaining({ type: 'reject', data: { reason: 'account paused' } }),
    ]);
    expect(stack.sink.messages.find((m) => m.parsed.subject === 'paused meanwhile')).toBeUndefined();
  }, 60_000);
});
