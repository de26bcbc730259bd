import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { admin } from '../helpers/admin-fixtures.js';
import {
  arrivalFor,
  expectAllPass,
  publishMx,
  receiverVerdict,
  sendEmail,
  setUpSenderDomain,
  useMailWorld,
  verpPattern,
  waitForStatus,
} from '../helpers/deliverability.js';

/**
 * How direct delivery finds and treats the recipient's servers (CONTRACT.md, "Delivery, authentication and
 * reports"): MX records in preference order, the A record without MX, a null MX as a permanent bounce,
 * 4xx answers retried (greylisting), 5xx answers bounced with the server's own words.
 */
const SENDER = 'routes.test';
const world = useMailWorld('direct');
const FROM = `Routes <x@${SENDER}>`;

beforeAll(async () => {
  await setUpSenderDomain(world, SENDER);
});
afterEach(async () => {
  await world.mx.reset();
});

describe('MX selection', () => {
  it('when the preferred MX is down, the next one gets the message', async () => {
    publishMx(world.dns, 'failover.test', [
      { ip: '127.0.0.2', priority: 10 },
      { ip: '127.0.0.3', priority: 20 },
    ]);
    await world.mx.host('127.0.0.2').setBehaviour('down');
    const id = await sendEmail(world.stack, { from: FROM, to: ['user@failover.test'] });
    const message = await arrivalFor(world, 'user@failover.test');
    expect(message.host).toBe('127.0.0.3');
    expect(world.mx.host('127.0.0.2').messages.filter((m) => m.envelopeTo.includes('user@failover.test'))).toEqual([]);
    const detail = await waitForStatus(world.stack, id, ['delivered']);
    const delivery = detail.events.find((e) => e.type === 'delivery')?.data;
    expect(delivery?.smtp_response).toBe(message.reply);
    // Direct delivery says the TLS it used: STARTTLS to a self-signed certificate, so not verified (issue 28).
    expect(delivery).toMatchObject({ tls_version: expect.stringMatching(/^TLSv1\.[23]$/), tls_verified: false });
    expect(detail.events.filter((e) => e.type === 'bounce')).toEqual([]);
  });

  it('tries MX hosts in preference order, not in the order DNS lists them', async () => {
    // Listed with the less preferred first; all up: the preferred one (lower number) must get it.
    world.dns.set('order.test', 'MX', [
      { exchange: 'backup.order.test', priority: 50 },
      { exchange: 'main.order.test', priority: 5 },
    ]);
    world.dns.set('backup.order.test', 'A', ['127.0.0.4']);
    world.dns.set('main.order.test', 'A', ['127.0.0.3']);
    const id = await sendEmail(world.stack, { from: FROM, to: ['user@order.test'] });
    expect((await arrivalFor(world, 'user@order.test')).host).toBe('127.0.0.3');
    await waitForStatus(world.stack, id, ['delivered']);
  });

  it('a domain without MX records gets its mail at its A record', async () => {
    world.dns.set('bare.test', 'A', ['127.0.0.4']);
    const id = await sendEmail(world.stack, { from: FROM, to: ['user@bare.test'] });
    expect((await arrivalFor(world, 'user@bare.test')).host).toBe('127.0.0.4');
    await waitForStatus(world.stack, id, ['delivered']);
  });

  it('a null MX (`0 .`) means the domain takes no mail: the email bounces permanently without a connection', async () => {
    world.dns.setNullMx('nomail.test');
    // An A record too: a null MX forbids falling back to it (RFC 7505).
    world.dns.set('nomail.test', 'A', ['127.0.0.4']);
    const connectionsBefore = world.mx.hosts.map((h) => h.connections);
    const id = await sendEmail(world.stack, { from: FROM, to: ['user@nomail.test'] });
    const detail = await waitForStatus(world.stack, id, ['bounced']);
    const bounce = detail.events.find((e) => e.type === 'bounce');
    expect(bounce?.data).toMatchObject({
      bounce_type: 'Permanent',
      bounced_recipients: [{ email_address: 'user@nomail.test', status: expect.stringMatching(/^5\./) }],
    });
    expect(detail.events.filter((e) => e.type === 'delivery')).toEqual([]);
    expect(world.mx.hosts.map((h) => h.connections)).toEqual(connectionsBefore);
  });

  it('a recipient domain that does not exist bounces permanently', async () => {
    const id = await sendEmail(world.stack, { from: FROM, to: ['user@no-such-domain.test'] });
    const detail = await waitForStatus(world.stack, id, ['bounced']);
    expect(detail.events.find((e) => e.type === 'bounce')?.data).toMatchObject({
      bounce_type: 'Permanent',
      bounced_recipients: [{ email_address: 'user@no-such-domain.test' }],
    });
  });
});

describe("the recipient server's answers", () => {
  it('greylisting: a 451 4.7.1 on the first attempt, the retry is accepted; the email ends delivered with no bounce', async () => {
    publishMx(world.dns, 'grey.test', [{ ip: '127.0.0.4', priority: 10 }]);
    const host = world.mx.host('127.0.0.4');
    await host.setBehaviour('greylist');
    const id = await sendEmail(world.stack, { from: FROM, to: ['user@grey.test'] });
    const message = await arrivalFor(world, 'user@grey.test', 50_000);
    const tries = host.attempts.filter((a) => a.recipient === 'user@grey.test');
    expect(tries.map((a) => a.reply.split(' ').slice(0, 2).join(' '))).toEqual(['451 4.7.1', '250 Accepted']);
    // The retry comes from the same return path, as greylisting needs (the triplet must repeat).
    expect(tries[1]!.envelopeFrom).toBe(tries[0]!.envelopeFrom);
    expect(tries[1]!.at - tries[0]!.at).toBeGreaterThanOrEqual(900);
    expect(message.envelopeFrom).toMatch(verpPattern(SENDER));
    const detail = await waitForStatus(world.stack, id, ['delivered']);
    expect(detail.events.map((e) => e.type)).toEqual(['send', 'delivery']);
    expectAllPass(await receiverVerdict(world, message), SENDER);
  }, 100_000);

  it("a 550 for the recipient ends the email bounced, Permanent, with the server's diagnostic; the address is suppressed", async () => {
    publishMx(world.dns, 'strict.test', [{ ip: '127.0.0.2', priority: 10 }]);
    world.mx.host('127.0.0.2').refuseRecipient = (a) =>
      a === 'gone@strict.test' ? '550 5.1.1 <gone@strict.test>: Recipient address rejected: User unknown' : undefined;
    const id = await sendEmail(world.stack, { from: FROM, to: ['gone@strict.test'] });
    const detail = await waitForStatus(world.stack, id, ['bounced']);
    expect(detail.events.find((e) => e.type === 'bounce')?.data).toEqual({
      bounce_type: 'Permanent',
      bounce_subtype: 'General',
      bounced_recipients: [
        {
          email_address: 'gone@strict.test',
          status: '5.1.1',
          diagnostic_code: expect.stringContaining('User unknown'),
        },
      ],
    });
    const supp = await admin<{ suppressions: { email_address: string; reason: string }[] }>(
      world.stack,
      'GET',
      `/accounts/${world.stack.accountId}/suppressions`,
    );
    expect(supp.body.suppressions.map((s) => [s.email_address, s.reason])).toContainEqual([
      'gone@strict.test',
      'bounce',
    ]);
  });

  it('one recipient refused and one accepted at the same MX: delivered to one, a Permanent bounce for the other', async () => {
    publishMx(world.dns, 'mixed.test', [{ ip: '127.0.0.3', priority: 10 }]);
    world.mx.host('127.0.0.3').refuseRecipient = (a) =>
      a === 'nobody@mixed.test' ? '550 5.1.1 <nobody@mixed.test>: no such user' : undefined;
    const id = await sendEmail(world.stack, { from: FROM, to: ['somebody@mixed.test', 'nobody@mixed.test'] });
    const message = await arrivalFor(world, 'somebody@mixed.test');
    expect(message.envelopeTo).toEqual(['somebody@mixed.test']);
    const detail = await waitForStatus(world.stack, id, ['delivered']);
    expect(detail.events.find((e) => e.type === 'delivery')?.data.recipients).toEqual(['somebody@mixed.test']);
    expect(detail.events.find((e) => e.type === 'bounce')?.data).toMatchObject({
      bounce_type: 'Permanent',
      bounced_recipients: [{ email_address: 'nobody@mixed.test', status: '5.1.1' }],
    });
  });
});
