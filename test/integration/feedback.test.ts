import { describe, expect, it } from 'vitest';
import { createSender } from '../helpers/admin-fixtures.js';
import { call, eventually, validEmail } from '../helpers/http.js';
import { mailReport, reportFixture, returnPathOf, stackTokens, tokenOf } from '../helpers/reports.js';
import { verifyWebhookSignature } from '../../src/webhooks/signature.js';
import { ADMIN_TOKEN, type Stack } from '../helpers/stack.js';
import { startWebhookReceiver } from '../helpers/webhook-receiver.js';
import { useStack } from '../helpers/use-stack.js';

const YAHOO_ID = 'em_01jbq7m3k2x9f5v8r4t6w0y2zc';
const POSTFIX_ID = 'em_01jbq7m3k2x9f5v8r4t6w0y2zd';
const HEADERS_ONLY_ID = 'em_01jbq7m3k2x9f5v8r4t6w0y2zf';
const DELAYED_ID = 'em_01jbq7m3k2x9f5v8r4t6w0y2zg';

async function send(stack: Stack, to: string): Promise<string> {
  const res = await call('POST', `${stack.api}/emails`, { token: stack.apiKey, body: validEmail({ to: [to] }) });
  expect(res.status).toBe(200);
  return res.body.id as string;
}

const statusOf = async (stack: Stack, id: string) =>
  (await call('GET', `${stack.api}/emails/${id}`, { token: stack.apiKey })).body.status as string;
/** Waits until the delivery's outcome is recorded, whatever the delivery path calls it. */
const delivered = (stack: Stack, id: string) => eventually(async () => (await statusOf(stack, id)) !== 'pending');
const eventsOf = (stack: Stack, id: string, type: string) =>
  stack.mailer.sql<
    { data: Record<string, unknown> }[]
  >`select data from events where email_id = ${id} and type = ${type} order by id`;
const suppressionsOf = (stack: Stack, id: string) =>
  stack.mailer.sql<
    { address: string; reason: string }[]
  >`select address, reason from suppressions where email_id = ${id} order by address`;

/** A report the listener records, and what it records. */
interface Recorded {
  fixture: string;
  fixtureId: string;
  token?: boolean;
  addresses?: Record<string, string>;
  toReturnPath?: boolean;
  status: string;
  event: string;
  data: Record<string, unknown>;
  suppressed: { address: string; reason: string };
}

/**
 * Reports the listener records: [test name, recipient, report, what it records]. The report quotes our email's id in
 * place of the fixture's, with its token when `token`, and goes to the email's return path when `toReturnPath`.
 */
const RECORDED: [string, string, Recorded][] = [
  [
    'an ARF abuse report makes the email complained, records the complaint and suppresses the complainer',
    'reader@example.net',
    {
      fixture: 'arf-yahoo.eml',
      fixtureId: YAHOO_ID,
      token: true,
      addresses: { 'Jane.Doe@yahoo.com': 'Reader@example.net' },
      status: 'complained',
      event: 'complaint',
      data: { complaint_feedback_type: 'abuse', complained_recipients: ['reader@example.net'] },
      suppressed: { address: 'reader@example.net', reason: 'complaint' },
    },
  ],
  [
    "a report mailed to the return path that quotes only the Message-ID and redacts the complainer names the email's one recipient",
    'Fraud Reader <fraud-reader@example.net>',
    {
      fixture: 'arf-headers-only.eml',
      fixtureId: HEADERS_ONLY_ID,
      toReturnPath: true,
      status: 'complained',
      event: 'complaint',
      data: { complaint_feedback_type: 'fraud', complained_recipients: ['fraud-reader@example.net'] },
      suppressed: { address: 'fraud-reader@example.net', reason: 'complaint' },
    },
  ],
  [
    'a DSN with a failed recipient makes the email bounced, records a Permanent bounce and suppresses the address',
    'gone@example.net',
    {
      fixture: 'dsn-postfix.eml',
      fixtureId: POSTFIX_ID,
      token: true,
      addresses: { 'nobody@example.net': 'gone@example.net' },
      status: 'bounced',
      event: 'bounce',
      data: {
        bounce_type: 'Permanent',
        bounce_subtype: 'General',
        bounced_recipients: [
          {
            email_address: 'gone@example.net',
            status: '5.1.1',
            diagnostic_code:
              '550 5.1.1 <gone@example.net>: Recipient address rejected: User unknown in virtual mailbox table',
          },
        ],
      },
      suppressed: { address: 'gone@example.net', reason: 'bounce' },
    },
  ],
];

describe('reports mailed to the inbound listener', () => {
  const stack = useStack();

  it('listens on HOST, on a free port here (MAILER_INBOUND_PORT=0)', () => {
    expect(stack.mailer.inboundUrl).toMatch(/^smtp:\/\/127\.0\.0\.1:\d+$/);
  });

  it.each(RECORDED)('%s', async (_name, to, r) => {
    const id = await send(stack, to);
    await delivered(stack, id);
    const report = reportFixture(
      r.fixture,
      { [r.fixtureId]: { id, ...(r.token ? { token: await tokenOf(stack, id) } : {}) } },
      r.addresses,
    );
    expect(
      await mailReport(stack.mailer.inboundUrl!, report, r.toReturnPath ? [await returnPathOf(stack, id)] : undefined),
    ).toMatch(/^250 /);

    expect(await statusOf(stack, id)).toBe(r.status);
    expect((await eventsOf(stack, id, r.event)).map((e) => e.data)).toEqual([r.data]);
    expect(await suppressionsOf(stack, id)).toEqual([r.suppressed]);
  });

  it('a delay warning at the return path is accepted and changes nothing', async () => {
    const id = await send(stack, 'slow@example.net');
    await delivered(stack, id);
    const before = await statusOf(stack, id);
    const report = reportFixture('dsn-delayed.eml', { [DELAYED_ID]: { id, token: await tokenOf(stack, id) } });
    const response = await mailReport(stack.mailer.inboundUrl!, report, [await returnPathOf(stack, id)]);
    expect(response).toMatch(/^250 /);

    expect(await statusOf(stack, id)).toBe(before);
    expect(await eventsOf(stack, id, 'bounce')).toEqual([]);
    expect(await suppressionsOf(stack, id)).toEqual([]);
  });

  it('a report with no token of ours, and mail that is no report, are refused with 550 5.7.1 and change nothing', async () => {
    const feedbackEvents = async () =>
      (
        await stack.mailer.sql<
          { n: number }[]
        >`select count(*)::int as n from events where type in ('bounce', 'complaint')`
      )[0]!.n;
    const before = await feedbackEvents();
    await expect(mailReport(stack.mailer.inboundUrl!, reportFixture('arf-yahoo.eml', {}))).rejects.toMatchObject({
      responseCode: 550,
      response: expect.stringMatching(/^550 5\.7\.1 /),
    });
    await expect(mailReport(stack.mailer.inboundUrl!, reportFixture('autoreply.eml', {}))).rejects.toMatchObject({
      responseCode: 550,
    });
    expect(await feedbackEvents()).toBe(before);
  });

  it("a report that overtakes the delivery's outcome is answered 451, so its sender retries", async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    stack.sink.beforeAccept = () => held;
    try {
      const id = await send(stack, 'early@example.net');
      await eventually(async () =>
        stack.mailer.sql`select 1 from emails where id = ${id} and lease_token is not null`.then((r) => r.length > 0),
      );
      // The message is held by the receiving server, so the token is signed here as the worker signed it.
      const report = reportFixture(
        'dsn-postfix.eml',
        { [POSTFIX_ID]: { id, token: (await stackTokens(stack)).sign(id) } },
        { 'nobody@example.net': 'early@example.net' },
      );
      await expect(mailReport(stack.mailer.inboundUrl!, report)).rejects.toMatchObject({ responseCode: 451 });
      expect(await statusOf(stack, id)).toBe('pending');

      release();
      await delivered(stack, id);
      expect(await mailReport(stack.mailer.inboundUrl!, report)).toMatch(/^250 /);
      expect(await statusOf(stack, id)).toBe('bounced');
    } finally {
      release();
      stack.sink.beforeAccept = async () => {};
    }
  });
});

describe('the mailbox simulator of the built-in catcher', () => {
  // No SMTP_URL: the service delivers to its built-in catcher, on a free port.
  const stack = useStack({ SMTP_URL: '', MAILER_CATCHER_PORT: '0', MAILER_WEBHOOK_ALLOW_PRIVATE: '1' });

  it("a complaint reaches the sender's webhook: signed, with the spec's data and no sent_at", async () => {
    const receiver = await startWebhookReceiver();
    try {
      const hook = await call<{ id: string; secret: string }>(
        'POST',
        `${stack.admin}/accounts/${stack.accountId}/webhooks`,
        {
          token: ADMIN_TOKEN,
          body: { url: `${receiver.url}/complaints`, events: ['complaint'] },
        },
      );
      const id = await send(stack, 'complaint+hook@simulator.mailer.test');
      const [h] = await eventually(async () =>
        receiver.on('/complaints').length > 0 ? receiver.on('/complaints') : undefined,
      );
      expect(h!.headers['x-mail-event']).toBe('complaint');
      expect(verifyWebhookSignature({ secret: hook.body.secret, headers: h!.headers, rawBody: h!.rawBody })).toEqual({
        ok: true,
      });
      expect(h!.body.email).toMatchObject({ id, to: ['complaint+hook@simulator.mailer.test'] });
      expect(h!.body.email).not.toHaveProperty('sent_at');
      expect(h!.body.data).toEqual({
        complaint_feedback_type: 'abuse',
        complained_recipients: ['complaint+hook@simulator.mailer.test'],
      });
    } finally {
      await receiver.close();
    }
  });

  it('bounce@ is refused at RCPT TO: the delivery bounces permanently with 5.1.1', async () => {
    const id = await send(stack, 'bounce@simulator.mailer.test');
    await eventually(async () => (await statusOf(stack, id)) === 'bounced');
    expect(stack.mailer.catcher).toBeDefined();
    const [bounce] = await eventsOf(stack, id, 'bounce');
    expect(bounce?.data).toMatchObject({
      bounce_type: 'Permanent',
      bounced_recipients: [{ email_address: 'bounce@simulator.mailer.test', status: '5.1.1' }],
    });
  });

  it('complaint@ is accepted, then an abuse report about it comes back through the report path', async () => {
    const id = await send(stack, 'complaint@simulator.mailer.test');
    await eventually(async () => (await statusOf(stack, id)) === 'complained');
    expect((await eventsOf(stack, id, 'complaint')).map((e) => e.data)).toEqual([
      { complaint_feedback_type: 'abuse', complained_recipients: ['complaint@simulator.mailer.test'] },
    ]);
    expect(await suppressionsOf(stack, id)).toEqual([
      { address: 'complaint@simulator.mailer.test', reason: 'complaint' },
    ]);
  });

  it('asyncbounce@ is accepted, then a DSN says it failed with 5.1.1', async () => {
    const id = await send(stack, 'asyncbounce+label@simulator.mailer.test');
    await eventually(async () => (await eventsOf(stack, id, 'bounce')).length > 0);
    expect(await statusOf(stack, id)).toBe('bounced');
    expect((await eventsOf(stack, id, 'bounce')).map((e) => e.data)).toEqual([
      {
        bounce_type: 'Permanent',
        bounce_subtype: 'General',
        bounced_recipients: [
          {
            email_address: 'asyncbounce+label@simulator.mailer.test',
            status: '5.1.1',
            diagnostic_code:
              '550 5.1.1 <asyncbounce+label@simulator.mailer.test>: Recipient address rejected: simulated asynchronous bounce',
          },
        ],
      },
    ]);
  });

  it('one complaint in 50 emails (2 %, over 0.08 %) puts the account under review, its quota halved', async () => {
    const s = await createSender(stack, 'complainer', 'complainer.example');
    const emails = Array.from({ length: 50 }, (_, i) =>
      validEmail({
        from: 'news@complainer.example',
        to: [i === 7 ? 'complaint+health@simulator.mailer.test' : `success+${i}@simulator.mailer.test`],
        subject: `health ${i}`,
      }),
    );
    expect((await call('POST', `${stack.api}/emails/batch`, { token: s.key, body: { emails } })).status).toBe(200);
    const account = await eventually(
      async () => {
        const r = await call<{ status: string; daily_quota: number }>('GET', `${stack.admin}/accounts/${s.accountId}`, {
          token: ADMIN_TOKEN,
        });
        return r.body.status === 'review' ? r.body : undefined;
      },
      40_000,
      250,
    );
    expect(account.daily_quota).toBe(500);
  }, 60_000);

  it('success@ is accepted and stays so', async () => {
    const id = await send(stack, 'success@simulator.mailer.test');
    await delivered(stack, id);
    await new Promise((r) => setTimeout(r, 1000));
    expect(await statusOf(stack, id)).toBe('delivered');
    expect(await eventsOf(stack, id, 'bounce')).toEqual([]);
    expect(await eventsOf(stack, id, 'complaint')).toEqual([]);
  });
});
