import { beforeAll, describe, expect, it } from 'vitest';
import { addDomain, admin, createKey } from '../helpers/admin-fixtures.js';
import { call, eventually, validEmail } from '../helpers/http.js';
import { buildDsn } from '../helpers/report-builders.js';
import { mailReport, returnPathOf } from '../helpers/reports.js';
import { useStack } from '../helpers/use-stack.js';

/**
 * One canonical form of every address (issue 22, item 1): the local part as given, the domain in its ASCII
 * form, compared without regard to case. Before it, a domain written with a fullwidth letter or a soft hyphen
 * slipped past a suppression of the plain address (nodemailer then delivered to the plain one), and a Unicode
 * and a punycode spelling of one domain were two people to suppression, reports and erasure.
 */
const stack = useStack();

type Detail = { email: { status: string; to: string[] }; events: { type: string; data: Record<string, unknown> }[] };
const detail = (id: string) => admin<Detail>(stack, 'GET', `/emails/${id}`);
const settled = (id: string) =>
  eventually(async () => {
    const r = await detail(id);
    return r.body.email.status === 'pending' ? undefined : r.body;
  }, 30_000);
const send = async (to: string[], subject: string) => {
  const res = await call<{ id: string }>('POST', `${stack.api}/emails`, {
    token: stack.apiKey,
    body: validEmail({ to, subject }),
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.id;
};
const suppressions = async () =>
  (
    await admin<{ suppressions: { email_address: string }[] }>(
      stack,
      'GET',
      `/accounts/${stack.accountId}/suppressions`,
    )
  ).body.suppressions.map((s) => s.email_address);

beforeAll(() => {
  stack.sink.refuseRecipient = (a) =>
    a === 'victim@customers.test' ? `550 5.1.1 <${a}>: Recipient address rejected: User unknown` : undefined;
});

describe('one canonical form of every address', () => {
  it('a suppressed address is not reached through another spelling of its domain, on any accepting path', async () => {
    await settled(await send(['victim@customers.test'], 'first'));
    expect(await suppressions()).toContain('victim@customers.test');
    const atSink = stack.sink.messages.length;

    const spellings = ['victim@ｃustomers.test', 'victim@cus\u00ADtomers.test', 'Victim@CUSTOMERS.test'];
    const single = await Promise.all(spellings.map((to, i) => send([to], `single ${i}`)));
    const batch = await call<{ job_id: string }>('POST', `${stack.api}/emails/batch`, {
      token: stack.apiKey,
      body: { emails: spellings.map((to, i) => validEmail({ to: [to], subject: `batch ${i}` })) },
    });
    expect(batch.status).toBe(200);
    const scheduled = await call<{ id: string }>('POST', `${stack.api}/emails/schedule`, {
      token: stack.apiKey,
      body: validEmail({
        to: [spellings[0]],
        subject: 'scheduled',
        scheduled_at: new Date(Date.now() + 1500).toISOString(),
      }),
    });
    expect(scheduled.status).toBe(200);
    const listed = await call<{ to: string[] }>('GET', `${stack.api}/emails/scheduled/${scheduled.body.id}`, {
      token: stack.apiKey,
    });
    expect(listed.body.to).toEqual(['victim@customers.test']);

    for (const id of single) {
      const d = await settled(id);
      // Stored, shown and judged in the one form.
      expect(d.email.to[0]!.toLowerCase()).toBe('victim@customers.test');
      expect(d.email.status).toBe('bounced');
      expect(d.events.map((e) => [e.type, e.data.bounce_subtype])).toEqual([['bounce', 'Suppressed']]);
    }
    const batchEmails = await eventually(async () => {
      const r = await call<{ data: { id: string; status: string }[] }>('GET', `${stack.api}/emails?page_size=100`, {
        token: stack.apiKey,
      });
      const ours = r.body.data.filter((e) => e.status === 'bounced');
      return ours.length >= 1 + single.length + spellings.length + 1 ? ours : undefined;
    }, 30_000);
    expect(batchEmails.length).toBeGreaterThanOrEqual(8);
    expect(stack.sink.messages.length).toBe(atSink);
  });

  it('a Unicode and a punycode spelling are one person to bounce reports, suppression and erasure', async () => {
    const id = await send(['bob@xn--bcher-kva.de'], 'idn');
    const arrived = await eventually(async () => stack.sink.messages.find((m) => m.parsed.subject === 'idn'));
    // smtp-server hands its application an IDN envelope address in Unicode, whatever came on the wire.
    expect(arrived.envelopeTo).toEqual(['bob@bücher.de']);
    await settled(id);

    // The receiving server's DSN names the recipient in its Unicode form (RFC 6533's utf-8 address type).
    const dsn = buildDsn({ recipient: 'bob@bücher.de' });
    expect(await mailReport(stack.mailer.inboundUrl!, dsn, [await returnPathOf(stack, id)])).toMatch(/^250 /);
    await eventually(async () => (await suppressions()).includes('bob@xn--bcher-kva.de'));

    const again = await send(['Bob <bob@BÜCHER.de>'], 'idn again');
    const d = await settled(again);
    expect(d.email.to).toEqual(['Bob <bob@xn--bcher-kva.de>']);
    expect(d.events.map((e) => [e.type, e.data.bounce_subtype])).toEqual([['bounce', 'Suppressed']]);

    const erased = await admin<Record<string, number>>(stack, 'POST', '/recipients/erase', {
      address: 'bob@bücher.de',
      account_id: stack.accountId,
    });
    expect(erased.status).toBe(200);
    expect(erased.body.emails).toBe(2);
    expect((await detail(id)).body.email.to).toEqual(['erased@erased.invalid']);
  });

  it('an API key allowed a Unicode domain sends from it, whichever spelling the sender uses', async () => {
    await addDomain(stack, stack.accountId, 'bücher.example');
    const { key } = await createKey(stack, stack.accountId, 'all', ['BÜCHER.example']);
    for (const from of ['zoe@bücher.example', 'zoe@xn--bcher-kva.example']) {
      const res = await call('POST', `${stack.api}/emails`, { token: key, body: validEmail({ from }) });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
    }
    const refused = await call('POST', `${stack.api}/emails`, {
      token: key,
      body: validEmail({ from: 'a@example.com' }),
    });
    expect(refused.status).toBe(403);
  });
});
