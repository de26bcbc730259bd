import { Resolver } from 'node:dns/promises';
import { beforeAll, describe, expect, it } from 'vitest';
import { admin } from '../helpers/admin-fixtures.js';
import { sendEmail, setUpSenderDomain, useMailWorld, verpPattern, waitForStatus } from '../helpers/deliverability.js';
import { eventually } from '../helpers/http.js';
import { buildArf, buildDsn, headerBlock, withoutHeaders } from '../helpers/report-builders.js';
import { mailReport } from '../helpers/reports.js';
import type { SinkMessage } from '../helpers/smtp-sink.js';

/**
 * Reports come back to the envelope sender, `b-<token>@rp.<domain>`, whose MX (published among the
 * domain's dns_records) is the service's inbound listener. The address alone names the email: a DSN
 * that quotes nothing of the original is still matched. A forged return path, or a real one quoting
 * another email, is answered 550 and recorded nowhere (CONTRACT.md, "Delivery, authentication and reports").
 */
const SENDER = 'reports.test';
const world = useMailWorld('relay');

beforeAll(async () => {
  await setUpSenderDomain(world, SENDER);
});

interface Sent {
  id: string;
  message: SinkMessage;
  returnPath: string;
}

/** Sends from the sender domain to `to` and waits until the relay took it and its outcome is recorded. */
async function delivered(to: string[]): Promise<Sent> {
  const id = await sendEmail(world.stack, { from: `Reports <x@${SENDER}>`, to });
  const message = await eventually(
    async () => world.stack.sink.messages.find((m) => m.parsed.headers.get('x-mail-email-id') === id),
    45_000,
    50,
  );
  await waitForStatus(world.stack, id, ['delivered']);
  expect(message.envelopeFrom).toMatch(verpPattern(SENDER));
  return { id, message, returnPath: message.envelopeFrom };
}

/**
 * Mails a report to a return-path address the way a receiving MTA would: the address's domain's MX, from
 * the test DNS, must be the service's host at the inbound listener's address (the port is the test's).
 */
async function mailToReturnPath(address: string, report: Buffer): Promise<string> {
  const resolver = new Resolver();
  resolver.setServers([world.dns.servers]);
  const [mx] = await resolver.resolveMx(address.split('@')[1]!);
  const [ip] = await resolver.resolve4(mx!.exchange);
  const inbound = new URL(world.stack.mailer.inboundUrl!);
  expect(ip).toBe(inbound.hostname);
  // Over STARTTLS, as a receiving MTA mails its bounce (requireTLS: the listener must offer it).
  return mailReport(`smtp://${ip}:${inbound.port}`, report, [address], { starttls: true });
}

async function stateOf(id: string) {
  const detail = await admin<{ email: { status: string }; events: { type: string; data: Record<string, unknown> }[] }>(
    world.stack,
    'GET',
    `/emails/${id}`,
  );
  const supp = await admin<{ suppressions: { email_address: string; reason: string }[] }>(
    world.stack,
    'GET',
    `/accounts/${world.stack.accountId}/suppressions`,
  );
  return {
    status: detail.body.email.status,
    feedback: detail.body.events.filter((e) => e.type === 'bounce' || e.type === 'complaint'),
    suppressions: supp.body.suppressions.map((s) => `${s.email_address} ${s.reason}`).sort(),
  };
}

describe('reports at the return path', () => {
  it('a DSN that quotes nothing of the original is matched by the token in the address: a Permanent bounce for the recipient', async () => {
    const sent = await delivered(['gone@example.net']);
    const dsn = buildDsn({ recipient: 'gone@example.net', status: '5.1.1' });
    expect(dsn.toString()).not.toMatch(/text\/rfc822-headers|message\/rfc822|X-Mail-Email-Id|X-Mail-Report-Token/i);
    expect(await mailToReturnPath(sent.returnPath, dsn)).toMatch(/^250 /);

    const after = await stateOf(sent.id);
    expect(after.status).toBe('bounced');
    expect(after.feedback.map((e) => [e.type, e.data])).toEqual([
      [
        'bounce',
        {
          bounce_type: 'Permanent',
          bounce_subtype: 'General',
          bounced_recipients: [
            {
              email_address: 'gone@example.net',
              status: '5.1.1',
              diagnostic_code: expect.stringContaining('User unknown'),
            },
          ],
        },
      ],
    ]);
    expect(after.suppressions).toContain('gone@example.net bounce');
  });

  it("an ARF report at the return path, its complainer redacted, is a complaint of the email's recipient", async () => {
    const sent = await delivered(['reader@example.net']);
    const quoted = withoutHeaders(headerBlock(sent.message.raw), ['To']) + 'To: redacted@receiver.test\r\n';
    const arf = buildArf({ feedbackType: 'abuse', originalHeaders: quoted });
    expect(await mailToReturnPath(sent.returnPath, arf)).toMatch(/^250 /);

    const after = await stateOf(sent.id);
    expect(after.status).toBe('complained');
    expect(after.feedback.map((e) => [e.type, e.data])).toEqual([
      ['complaint', { complaint_feedback_type: 'abuse', complained_recipients: ['reader@example.net'] }],
    ]);
    expect(after.suppressions).toContain('reader@example.net complaint');
  });

  it("a DSN at the return path speaks only for the email's own recipients", async () => {
    const sent = await delivered(['own@example.net']);
    const before = await stateOf(sent.id);
    expect(await mailToReturnPath(sent.returnPath, buildDsn({ recipient: 'stranger@example.org' }))).toMatch(/^250 /);
    expect(await stateOf(sent.id)).toEqual(before);
  });
});

describe('forged reports are answered 550 and recorded nowhere', () => {
  it('a return-path address with a bad token is refused', async () => {
    const sent = await delivered(['victim@example.net']);
    const before = await stateOf(sent.id);
    const [local, domain] = sent.returnPath.split('@') as [string, string];
    const mac = local.slice(local.lastIndexOf('-') + 1);
    const forgedMac = `${local.slice(0, local.lastIndexOf('-') + 1)}${mac.slice(0, -1)}${mac.endsWith('a') ? 'b' : 'a'}`;
    for (const address of [
      `${forgedMac}@${domain}`,
      `b-${sent.id}@${domain}`,
      `b-${sent.id}-${'a'.repeat(mac.length)}@${domain}`,
    ]) {
      await expect(mailToReturnPath(address, buildDsn({ recipient: 'victim@example.net' }))).rejects.toMatchObject({
        responseCode: 550,
      });
    }
    expect(await stateOf(sent.id)).toEqual(before);
    expect(before.status).toBe('delivered');
  });

  it("one email's valid return path quoting another email's headers is refused, and neither email changes", async () => {
    const mine = await delivered(['mine@example.net']);
    const target = await delivered(['target@example.net']);
    const beforeMine = await stateOf(mine.id);
    const beforeTarget = await stateOf(target.id);
    const targetHeaders = headerBlock(target.message.raw);
    expect(targetHeaders).toContain(target.id);

    const dsn = buildDsn({ recipient: 'target@example.net', originalHeaders: targetHeaders });
    await expect(mailToReturnPath(mine.returnPath, dsn)).rejects.toMatchObject({ responseCode: 550 });
    const arf = buildArf({ originalHeaders: targetHeaders, originalRcptTo: 'target@example.net' });
    await expect(mailToReturnPath(mine.returnPath, arf)).rejects.toMatchObject({ responseCode: 550 });

    expect(await stateOf(mine.id)).toEqual(beforeMine);
    expect(await stateOf(target.id)).toEqual(beforeTarget);
  });
});
