import net from 'node:net';
import { describe, expect, it } from 'vitest';
import { call, eventually, validEmail } from '../helpers/http.js';
import { mailReport, reportFixture, returnPathOf, stackTokens, tokenOf } from '../helpers/reports.js';
import { ADMIN_TOKEN, type Stack } from '../helpers/stack.js';
import { createReportTokens } from '../../src/delivery/message/report-token.js';
import { MAX_INBOUND_BYTES, MAX_INBOUND_RECIPIENTS } from '../../src/inbound/report-listener.js';
import { useStack } from '../helpers/use-stack.js';

const YAHOO_ID = 'em_01jbq7m3k2x9f5v8r4t6w0y2zc';
const POSTFIX_ID = 'em_01jbq7m3k2x9f5v8r4t6w0y2zd';

/** Everything a report could change about an email and its account. */
async function stateOf(stack: Stack, id: string) {
  const email = await call('GET', `${stack.api}/emails/${id}`, { token: stack.apiKey });
  const account = await call('GET', `${stack.admin}/accounts/${stack.accountId}`, { token: ADMIN_TOKEN });
  const events = await stack.mailer.sql<{ type: string; data: Record<string, unknown> }[]>`
    select type, data from events where email_id = ${id} order by id`;
  const suppressions = await stack.mailer.sql<{ address: string; reason: string }[]>`
    select address, reason from suppressions where account_id = ${stack.accountId} order by address`;
  return {
    status: email.body.status,
    events,
    suppressions,
    account: {
      status: account.body.status,
      complaint_rate: account.body.complaint_rate,
      bounce_rate: account.body.bounce_rate,
      daily_quota: account.body.daily_quota,
    },
  };
}

async function delivered(stack: Stack, to: string[]): Promise<{ id: string; token: string }> {
  const res = await call('POST', `${stack.api}/emails`, { token: stack.apiKey, body: validEmail({ to }) });
  expect(res.status).toBe(200);
  const id = res.body.id as string;
  await eventually(
    async () => (await call('GET', `${stack.api}/emails/${id}`, { token: stack.apiKey })).body.status !== 'pending',
  );
  return { id, token: await tokenOf(stack, id) };
}

/** A raw SMTP conversation: each command's reply, as the listener answers it. */
async function converse(url: string, commands: string[]): Promise<string[]> {
  const { hostname, port } = new URL(url);
  const socket = net.connect(Number(port), hostname);
  const replies: string[] = [];
  let buffer = '';
  const next = () =>
    new Promise<string>((resolve, reject) => {
      const check = () => {
        // A reply ends with a line whose code is followed by a space.
        const m = /(^|\r\n)(\d{3}) [^\r\n]*\r\n/.exec(buffer);
        if (!m) return false;
        const end = m.index + m[0].length;
        resolve(buffer.slice(0, end).trim());
        buffer = buffer.slice(end);
        return true;
      };
      if (check()) return;
      const onData = (d: Buffer) => {
        buffer += d.toString();
        if (check()) socket.off('data', onData);
      };
      socket.on('data', onData);
      socket.once('error', reject);
    });
  try {
    await next(); // greeting
    for (const c of commands) {
      socket.write(`${c}\r\n`);
      replies.push(await next());
    }
  } finally {
    socket.destroy();
  }
  return replies;
}

// One stack for both halves of 'reports must prove ...' (the bounded listener below has its own; its
// connections' limits are in smtp-slots.test.ts).
const stack = useStack();

describe('reports must prove they came back for the email (inbound listener)', () => {
  it('every message carries a report token that names its email', async () => {
    const { id, token } = await delivered(stack, ['token@example.net']);
    expect((await stackTokens(stack)).verify(token)).toEqual({ emailId: id });
  });

  it('a forged complaint and bounce (right email id and Message-ID, no or an invalid token) are refused 550 5.7.1 and change nothing', async () => {
    const { id } = await delivered(stack, ['victim@example.net']);
    const before = await stateOf(stack, id);
    const forgedTokens = [
      undefined, // the fixture's own token, with the id changed: signed under another key for another id
      createReportTokens('an-attackers-own-secret-key').sign(id),
      `${id}-${'a'.repeat(24)}`,
    ];
    for (const token of forgedTokens) {
      const arf = reportFixture(
        'arf-yahoo.eml',
        { [YAHOO_ID]: { id, ...(token ? { token } : {}) } },
        { 'Jane.Doe@yahoo.com': 'victim@example.net' },
      );
      const dsn = reportFixture(
        'dsn-postfix.eml',
        { [POSTFIX_ID]: { id, ...(token ? { token } : {}) } },
        { 'nobody@example.net': 'victim@example.net' },
      );
      for (const report of [arf, dsn]) {
        await expect(mailReport(stack.mailer.inboundUrl!, report)).rejects.toMatchObject({
          responseCode: 550,
          response: expect.stringMatching(/^550 5\.7\.1 /),
        });
      }
    }
    // Without any token line at all, too.
    const bare = reportFixture('arf-yahoo.eml', { [YAHOO_ID]: { id } }, { 'Jane.Doe@yahoo.com': 'victim@example.net' })
      .toString()
      .replace(/^X-Mail-Report-Token: .*\r?\n/m, '');
    await expect(mailReport(stack.mailer.inboundUrl!, Buffer.from(bare))).rejects.toMatchObject({ responseCode: 550 });
    expect(await stateOf(stack, id)).toEqual(before);
    expect(before.status).toBe('delivered');
  });

  it("a valid token of one email quoted with another email's X-Mail-Email-Id is refused and changes neither", async () => {
    const mine = await delivered(stack, ['mine@example.net']);
    const victim = await delivered(stack, ['target@example.net']);
    const before = await stateOf(stack, victim.id);
    const report = reportFixture(
      'dsn-postfix.eml',
      { [POSTFIX_ID]: { id: victim.id, token: mine.token } },
      { 'nobody@example.net': 'target@example.net' },
    );
    await expect(mailReport(stack.mailer.inboundUrl!, report)).rejects.toMatchObject({ responseCode: 550 });
    // And mailed to one email's return path while quoting another's token.
    await expect(
      mailReport(
        stack.mailer.inboundUrl!,
        reportFixture('dsn-postfix.eml', { [POSTFIX_ID]: victim }, { 'nobody@example.net': 'target@example.net' }),
        [await returnPathOf(stack, mine.id)],
      ),
    ).rejects.toMatchObject({ responseCode: 550 });
    expect(await stateOf(stack, victim.id)).toEqual(before);
    expect((await stateOf(stack, mine.id)).status).toBe('delivered');
  });

  it('a return path with a forged token is refused at RCPT TO', async () => {
    const { id } = await delivered(stack, ['rcpt@example.net']);
    const report = reportFixture(
      'dsn-postfix.eml',
      { [POSTFIX_ID]: { id } },
      { 'nobody@example.net': 'rcpt@example.net' },
    );
    await expect(
      mailReport(stack.mailer.inboundUrl!, report, [`b-${id}-${'a'.repeat(24)}@rp.mailer.test`]),
    ).rejects.toMatchObject({ responseCode: 550 });
    expect((await stateOf(stack, id)).status).toBe('delivered');
  });
});

// The genuine reports: recorded once, for the email's own recipients only.
describe('reports must prove they came back for the email (inbound listener)', () => {
  it('a genuine DSN quoting the token is recorded', async () => {
    const email = await delivered(stack, ['gone@example.net']);
    const report = reportFixture(
      'dsn-postfix.eml',
      { [POSTFIX_ID]: email },
      { 'nobody@example.net': 'gone@example.net' },
    );
    expect(await mailReport(stack.mailer.inboundUrl!, report)).toMatch(/^250 /);
    const after = await stateOf(stack, email.id);
    expect(after.status).toBe('bounced');
    expect(after.events.filter((e) => e.type === 'bounce')).toHaveLength(1);
    expect(after.suppressions).toContainEqual({ address: 'gone@example.net', reason: 'bounce' });
  });

  it("a DSN mailed to the return path without the original's headers is recorded", async () => {
    const { id } = await delivered(stack, ['verp@example.net']);
    const raw = reportFixture(
      'dsn-postfix.eml',
      { [POSTFIX_ID]: { id } },
      { 'nobody@example.net': 'verp@example.net' },
    ).toString();
    const boundary = '--3F1B2C0A1D.1741083611/mx.example.net';
    const withoutOriginal = `${raw.slice(0, raw.indexOf(`${boundary}\nContent-Description: Undelivered Message`))}${boundary}--\n`;
    expect(withoutOriginal).not.toContain('X-Mail-Report-Token');
    expect(withoutOriginal).not.toContain('X-Mail-Email-Id');
    await expect(mailReport(stack.mailer.inboundUrl!, Buffer.from(withoutOriginal))).rejects.toMatchObject({
      responseCode: 550,
    });
    expect(
      await mailReport(stack.mailer.inboundUrl!, Buffer.from(withoutOriginal), [await returnPathOf(stack, id)]),
    ).toMatch(/^250 /);
    expect((await stateOf(stack, id)).status).toBe('bounced');
  });

  it('a DSN naming an address the email was not sent to records nothing for it', async () => {
    const email = await delivered(stack, ['own@example.net']);
    const before = await stateOf(stack, email.id);
    const foreign = reportFixture(
      'dsn-postfix.eml',
      { [POSTFIX_ID]: email },
      { 'nobody@example.net': 'stranger@example.org' },
    );
    expect(await mailReport(stack.mailer.inboundUrl!, foreign)).toMatch(/^250 /);
    expect(await stateOf(stack, email.id)).toEqual(before);

    // Beside one of the email's own recipients, only that one is recorded.
    const raw = foreign
      .toString()
      .replace(
        'Final-Recipient: rfc822; stranger@example.org',
        'Final-Recipient: rfc822; own@example.net\nAction: failed\nStatus: 5.1.1\n\nFinal-Recipient: rfc822; stranger@example.org',
      );
    expect(await mailReport(stack.mailer.inboundUrl!, Buffer.from(raw))).toMatch(/^250 /);
    const after = await stateOf(stack, email.id);
    expect(
      after.events
        .filter((e) => e.type === 'bounce')
        .map((e) => (e.data.bounced_recipients as { email_address: string }[]).map((r) => r.email_address)),
    ).toEqual([['own@example.net']]);
    expect(after.suppressions.map((s) => s.address)).not.toContain('stranger@example.org');
  });

  it("an ARF at a recipient's return path is that recipient's complaint, recorded once however often it is resent", async () => {
    const email = await delivered(stack, ['repeat@example.net', 'other@example.net']);
    const arf = reportFixture('arf-yahoo.eml', { [YAHOO_ID]: email }, { 'Jane.Doe@yahoo.com': 'repeat@example.net' });
    // With only the header token, shared by both copies, it cannot tell whose complaint it is: nothing recorded.
    expect(await mailReport(stack.mailer.inboundUrl!, arf)).toMatch(/^250 /);
    expect((await stateOf(stack, email.id)).events.filter((e) => e.type === 'complaint')).toEqual([]);

    const first = [await returnPathOf(stack, email.id, 0)];
    for (let i = 0; i < 3; i++) expect(await mailReport(stack.mailer.inboundUrl!, arf, first)).toMatch(/^250 /);
    // Copies arriving together too.
    await Promise.all([
      mailReport(stack.mailer.inboundUrl!, arf, first),
      mailReport(stack.mailer.inboundUrl!, arf, first),
    ]);
    const after = await stateOf(stack, email.id);
    expect(after.status).toBe('complained');
    expect(after.events.filter((e) => e.type === 'complaint').map((e) => e.data)).toEqual([
      { complaint_feedback_type: 'abuse', complained_recipients: ['repeat@example.net'] },
    ]);
    expect(after.suppressions.filter((s) => s.reason === 'complaint' && s.address.endsWith('@example.net'))).toEqual([
      { address: 'repeat@example.net', reason: 'complaint' },
    ]);

    // The other recipient's complaint about the same email, at its own return path, is a new one.
    expect(await mailReport(stack.mailer.inboundUrl!, arf, [await returnPathOf(stack, email.id, 1)])).toMatch(/^250 /);
    expect(
      (await stateOf(stack, email.id)).events
        .filter((e) => e.type === 'complaint')
        .map((e) => e.data.complained_recipients),
    ).toEqual([['repeat@example.net'], ['other@example.net']]);
  });
});

describe('the inbound listener is bounded', () => {
  const stack = useStack();

  it(`refuses messages over ${MAX_INBOUND_BYTES} bytes with 552`, async () => {
    const big = Buffer.concat([Buffer.from('Subject: big\r\n\r\n'), Buffer.alloc(MAX_INBOUND_BYTES + 1024, 'a\r\n')]);
    await expect(mailReport(stack.mailer.inboundUrl!, big)).rejects.toMatchObject({ responseCode: 552 });
  });

  it(`takes at most ${MAX_INBOUND_RECIPIENTS} recipients per message`, async () => {
    const rcpts = Array.from({ length: MAX_INBOUND_RECIPIENTS + 1 }, (_, i) => `RCPT TO:<fbl${i}@mailer.test>`);
    const replies = await converse(stack.mailer.inboundUrl!, ['EHLO test', 'MAIL FROM:<>', ...rcpts]);
    expect(replies.slice(2, 2 + MAX_INBOUND_RECIPIENTS).every((r) => r.startsWith('250'))).toBe(true);
    expect(replies.at(-1)).toMatch(/^452 /);
  });
});
