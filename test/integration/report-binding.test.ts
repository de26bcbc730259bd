import { describe, expect, it } from 'vitest';
import { HEALTH_POLICY } from '../../src/domain/health.js';
import { admin, createSender } from '../helpers/admin-fixtures.js';
import { call, eventually, validEmail } from '../helpers/http.js';
import { buildArf, buildDsn, headerBlock } from '../helpers/report-builders.js';
import { mailReport } from '../helpers/reports.js';
import type { SinkMessage } from '../helpers/smtp-sink.js';
import { useStack } from '../helpers/use-stack.js';

/**
 * A report affects only the recipient whose copy carried it (issue 22, item 2). Every copy carries the
 * email's header token, so before, any recipient could mail a well-formed DSN or ARF about a co-recipient
 * (a cc suppressed `victim@`), and one recipient's forged complaints moved the account to review, then paused.
 * Now each recipient's copy has its own return path, reports speak for that copy's recipient only, and only
 * feedback loops the operator lists (MAILER_FBL_SOURCES; here the address 127.0.0.2) move health.
 */
const TRUSTED_LOOP = '127.0.0.2';
const stack = useStack({ MAILER_FBL_SOURCES: TRUSTED_LOOP });

type Account = { status: string; complaint_rate: number };
const accountOf = async (id: string) => (await admin<Account>(stack, 'GET', `/accounts/${id}`)).body;
const suppressed = async (accountId: string) =>
  (
    await stack.mailer.sql<
      { address: string; reason: string }[]
    >`select address, reason from suppressions where account_id = ${accountId} order by address`
  ).map((s) => `${s.address} ${s.reason}`);
const eventsOf = (id: string) =>
  stack.mailer.sql<
    { type: string; data: Record<string, unknown> }[]
  >`select type, data from events where email_id = ${id} order by id`;

/** Each recipient's copy of an email as the receiving server got it. */
async function copiesOf(id: string, recipients: string[]): Promise<Map<string, SinkMessage>> {
  return eventually(async () => {
    const found = stack.sink.messages.filter((m) => m.parsed.headers.get('x-mail-email-id') === id);
    return found.length >= recipients.length ? new Map(found.map((m) => [m.envelopeTo[0]!, m])) : undefined;
  });
}

async function sendFrom(key: string, from: string, to: string[], cc: string[] = []): Promise<string> {
  const res = await call<{ id: string }>('POST', `${stack.api}/emails`, {
    token: key,
    body: validEmail({ from, to, cc }),
  });
  expect(res.status).toBe(200);
  return res.body.id;
}

describe('reports speak for the copy they came back for', () => {
  it("a cc'd recipient can neither bounce nor complain in another recipient's name", async () => {
    const s = await createSender(stack, 'binding', 'binding.example');
    const id = await sendFrom(s.key, 'news@binding.example', ['victim@example.net'], ['mallory@example.net']);
    const copies = await copiesOf(id, ['victim@example.net', 'mallory@example.net']);
    const mine = copies.get('mallory@example.net')!;
    const victims = copies.get('victim@example.net')!;
    // Two copies, two envelope senders: mallory sees only her own.
    expect(mine.envelopeFrom).not.toBe(victims.envelopeFrom);
    await eventually(
      async () =>
        (await call<{ status: string }>('GET', `${stack.api}/emails/${id}`, { token: s.key })).body.status ===
        'delivered',
    );

    // Mallory mails a DSN naming the victim, quoting her copy's headers, to her own return path (and to the FBL address).
    const dsn = buildDsn({ recipient: 'victim@example.net', originalHeaders: headerBlock(mine.raw) });
    expect(await mailReport(stack.mailer.inboundUrl!, dsn, [mine.envelopeFrom])).toMatch(/^250 /);
    expect(await mailReport(stack.mailer.inboundUrl!, dsn)).toMatch(/^250 /);
    // Nor can she use the victim's return path: she never saw it, and a forged one is refused at RCPT TO.
    const forged = victims.envelopeFrom.replace(/-[a-z2-7]{24}@/, `-${'a'.repeat(24)}@`);
    await expect(mailReport(stack.mailer.inboundUrl!, dsn, [forged])).rejects.toMatchObject({ responseCode: 550 });
    expect(await suppressed(s.accountId)).toEqual([]);
    expect((await eventsOf(id)).map((e) => e.type)).toEqual(['send', 'delivery']);

    // Her ARF naming the victim is her own complaint (the copy's recipient), not the victim's.
    const arf = buildArf({ originalHeaders: headerBlock(mine.raw), originalRcptTo: 'victim@example.net' });
    expect(await mailReport(stack.mailer.inboundUrl!, arf, [mine.envelopeFrom])).toMatch(/^250 /);
    const complaints = (await eventsOf(id)).filter((e) => e.type === 'complaint');
    expect(complaints.map((e) => e.data.complained_recipients)).toEqual([['mallory@example.net']]);
    expect(await suppressed(s.accountId)).toEqual(['mallory@example.net complaint']);

    // The victim's own DSN, at the victim's return path, is the victim's bounce.
    expect(
      await mailReport(stack.mailer.inboundUrl!, buildDsn({ recipient: 'victim@example.net' }), [victims.envelopeFrom]),
    ).toMatch(/^250 /);
    expect(await suppressed(s.accountId)).toEqual(['mallory@example.net complaint', 'victim@example.net bounce']);
  });

  it('complaints from a source MAILER_FBL_SOURCES does not list never move health; from a listed loop they do', async () => {
    const s = await createSender(stack, 'health', 'health.example');
    const recipients = Array.from({ length: HEALTH_POLICY.minVolume }, (_, i) => `r${i}@example.net`);
    const res = await call<{ job_id: string }>('POST', `${stack.api}/emails/batch`, {
      token: s.key,
      body: {
        emails: recipients.map((to, i) =>
          validEmail({ from: 'news@health.example', to: [to], subject: `health ${i}` }),
        ),
      },
    });
    expect(res.status).toBe(200);
    const copies = await eventually(async () => {
      const found = stack.sink.messages.filter(
        (m) => m.parsed.subject?.startsWith('health ') && recipients.includes(m.envelopeTo[0]!),
      );
      return found.length >= recipients.length ? found : undefined;
    }, 30_000);
    await eventually(
      async () =>
        (await call<{ status: string }>('GET', `${stack.api}/emails/batch/${res.body.job_id}`, { token: s.key })).body
          .status === 'completed',
      30_000,
    );
    const complain = async (copy: SinkMessage, localAddress: string) => {
      const arf = buildArf({ originalHeaders: headerBlock(copy.raw) });
      expect(await mailReport(stack.mailer.inboundUrl!, arf, [copy.envelopeFrom], { localAddress })).toMatch(/^250 /);
    };

    // One recipient after another mails forged complaints from an address nobody listed: 10 of 50 emails.
    for (const copy of copies.slice(0, 10)) await complain(copy, '127.0.0.1');
    const id = copies[0]!.parsed.headers.get('x-mail-email-id') as string;
    expect((await eventsOf(id)).map((e) => e.type)).toContain('complaint');
    expect(await accountOf(s.accountId)).toMatchObject({ status: 'healthy', complaint_rate: 0 });

    // The listed feedback loop: one complaint in 50 puts the account under review (review → paused, and its
    // minimum of distinct complainants, is the policy's: test/unit/health.test.ts).
    await complain(copies[10]!, TRUSTED_LOOP);
    await eventually(async () => (await accountOf(s.accountId)).status === 'review');
  }, 90_000);
});
