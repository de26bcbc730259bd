import crypto from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { admin } from '../helpers/admin-fixtures.js';
import {
  arrivalFor,
  expectAllPass,
  expectDkimPass,
  MAILER_ADDRESS,
  MAILER_HOSTNAME,
  publishMx,
  receiverVerdict,
  recordOf,
  sendEmail,
  setUpSenderDomain,
  useMailWorld,
  verpPattern,
  waitForStatus,
  type DomainView,
} from '../helpers/deliverability.js';

/**
 * Direct delivery as a receiving mail system sees it: the message reaches the recipient domain's MX,
 * from the address the sender's SPF names, with the VERP envelope sender, a DKIM signature of the From
 * domain, and DMARC passing under a `p=reject` policy (CONTRACT.md, "Delivery, authentication and reports").
 */
const SENDER = 'shop.test';
const world = useMailWorld('direct');
let domain: DomainView;

beforeAll(async () => {
  domain = await setUpSenderDomain(world, SENDER);
  publishMx(world.dns, 'inbox.test', [{ ip: '127.0.0.2', priority: 10 }]);
  publishMx(world.dns, 'other.test', [{ ip: '127.0.0.3', priority: 10 }]);
});

describe('a sender domain set up through DNS', () => {
  it('lists every record to publish, and after verification ownership, SPF and DKIM are verified', () => {
    expect(recordOf(domain, 'ownership')).toMatchObject({ type: 'TXT', name: `_mailer.${SENDER}`, status: 'verified' });
    expect(recordOf(domain, 'spf')).toMatchObject({
      type: 'TXT',
      name: SENDER,
      value: `v=spf1 a:${MAILER_HOSTNAME} ~all`,
      status: 'verified',
    });
    expect(recordOf(domain, 'dkim')).toMatchObject({
      type: 'TXT',
      name: expect.stringMatching(new RegExp(`^[A-Za-z0-9_-]+\\._domainkey\\.${SENDER.replace('.', '\\.')}$`)),
      status: 'verified',
    });
    expect(recordOf(domain, 'return_path')).toMatchObject({
      type: 'MX',
      name: `rp.${SENDER}`,
      value: `10 ${MAILER_HOSTNAME}`,
    });
    expect(recordOf(domain, 'return_path_spf')).toMatchObject({
      type: 'TXT',
      name: `rp.${SENDER}`,
      value: `v=spf1 a:${MAILER_HOSTNAME} -all`,
    });
    expect(recordOf(domain, 'dmarc')).toMatchObject({
      type: 'TXT',
      name: `_dmarc.${SENDER}`,
      value: expect.stringMatching(/^v=DMARC1; p=none;/),
    });
  });

  it('publishes an RSA-2048 public key and never shows the private key', async () => {
    const p = /(?:^|;)\s*p=([A-Za-z0-9+/=]+)/.exec(recordOf(domain, 'dkim').value)?.[1];
    expect(recordOf(domain, 'dkim').value).toMatch(/^v=DKIM1; k=rsa; p=/);
    const key = crypto.createPublicKey({ key: Buffer.from(p!, 'base64'), format: 'der', type: 'spki' });
    expect(key.asymmetricKeyDetails?.modulusLength).toBe(2048);
    const listed = await admin(world.stack, 'GET', `/accounts/${world.stack.accountId}/domains`);
    for (const text of [JSON.stringify(domain), listed.text]) {
      expect(text).not.toMatch(/PRIVATE KEY|private_key|privateKey/);
    }
  });
});

describe('direct delivery', () => {
  it("reaches the recipient domain's MX with the VERP envelope sender, and the receiver finds DKIM, SPF and DMARC passing", async () => {
    const id = await sendEmail(world.stack, {
      from: `Shop <x@${SENDER}>`,
      to: ['reader@inbox.test'],
      subject: 'Authenticated',
    });
    const message = await arrivalFor(world, 'reader@inbox.test');
    expect(message.host).toBe('127.0.0.2');
    expect(message.envelopeFrom).toMatch(verpPattern(SENDER));
    expect(message.envelopeFrom.startsWith(`b-${id}.0-`)).toBe(true);
    expect(message.remoteAddress).toBe(MAILER_ADDRESS);
    expect(message.helo).toBe(MAILER_HOSTNAME);

    const verdict = await receiverVerdict(world, message);
    expectAllPass(verdict, SENDER);
    expect(verdict.dkim.find((d) => d.domain === SENDER)?.selector).toBe(
      recordOf(domain, 'dkim').name.split('._domainkey.')[0],
    );
    expect(verdict.dmarc.policy).toBe('reject');
    await waitForStatus(world.stack, id, ['delivered']);
  });

  it("signs relaxed/relaxed with rsa-sha256, so a receiver's added headers and re-wrapped whitespace keep it valid", async () => {
    await sendEmail(world.stack, {
      from: `x@${SENDER}`,
      to: ['canon@inbox.test'],
      subject: 'Canonicalization',
      html: '<p>Hello <b>there</b></p>',
    });
    const message = await arrivalFor(world, 'canon@inbox.test');
    const signature = /^DKIM-Signature:([^\r\n]*(?:\r?\n[ \t][^\r\n]*)*)/im.exec(message.raw.toString())?.[1] ?? '';
    expect(signature.replace(/\s+/g, '')).toMatch(/(^|;)c=relaxed\/relaxed(;|$)/);
    expect(signature.replace(/\s+/g, '')).toMatch(/(^|;)a=rsa-sha256(;|$)/);
    expect(signature.replace(/\s+/g, '')).toMatch(new RegExp(`(^|;)d=${SENDER.replace('.', '\\.')}(;|$)`));
    // What a forwarding hop may do: add a header above the signature, leave trailing spaces on the body's lines.
    const raw = message.raw.toString();
    const split = raw.indexOf('\r\n\r\n') + 4;
    const body = raw.slice(split).replace(/([^\r\n])\r\n/g, '$1  \r\n');
    const rewritten = Buffer.from(
      `Received: from relay.receiver.test by mx.receiver.test; ${new Date().toUTCString()}\r\n${raw.slice(0, split)}${body}`,
    );
    expect(body).not.toBe(raw.slice(split));
    expectDkimPass(await receiverVerdict(world, { ...message, raw: rewritten }), SENDER);
  });

  it('uses STARTTLS when the MX offers it, though its certificate is self-signed; and sends in plain text when not offered', async () => {
    const tlsHost = world.mx.host('127.0.0.2');
    expect(tlsHost.tls).toBe(true);
    await sendEmail(world.stack, { from: `x@${SENDER}`, to: ['secure@inbox.test'] });
    expect((await arrivalFor(world, 'secure@inbox.test')).secure).toBe(true);

    // Another host, one that offers no STARTTLS (direct delivery reuses its connection to the first, TLS and all).
    const plainHost = world.mx.host('127.0.0.4');
    plainHost.tls = false;
    publishMx(world.dns, 'plain.test', [{ ip: '127.0.0.4', priority: 10 }]);
    try {
      const id = await sendEmail(world.stack, { from: `x@${SENDER}`, to: ['plain@plain.test'] });
      expect((await arrivalFor(world, 'plain@plain.test')).secure).toBe(false);
      await waitForStatus(world.stack, id, ['delivered']);
    } finally {
      plainHost.tls = true;
    }
  });
});

describe('direct delivery', () => {
  it("the delivery event's smtp_response is the recipient MX's own reply", async () => {
    const id = await sendEmail(world.stack, { from: `x@${SENDER}`, to: ['reply@inbox.test'] });
    const message = await arrivalFor(world, 'reply@inbox.test');
    const detail = await waitForStatus(world.stack, id, ['delivered']);
    const delivery = detail.events.find((e) => e.type === 'delivery');
    expect(delivery?.data).toMatchObject({ recipients: ['reply@inbox.test'], smtp_response: message.reply });
    expect(message.reply).toMatch(/^250 2\.0\.0 Ok: queued as \w+ at 127\.0\.0\.2$/);
  });

  it("an email to two recipient domains reaches each domain's own MX, each copy passing authentication", async () => {
    const id = await sendEmail(world.stack, {
      from: `x@${SENDER}`,
      to: ['first@inbox.test', 'second@other.test'],
      subject: 'Two domains',
    });
    const first = await arrivalFor(world, 'first@inbox.test');
    const second = await arrivalFor(world, 'second@other.test');
    expect([first.host, first.envelopeTo]).toEqual(['127.0.0.2', ['first@inbox.test']]);
    expect([second.host, second.envelopeTo]).toEqual(['127.0.0.3', ['second@other.test']]);
    for (const message of [first, second]) {
      expect(message.envelopeFrom).toMatch(verpPattern(SENDER));
      expectAllPass(await receiverVerdict(world, message), SENDER);
    }
    const detail = await waitForStatus(world.stack, id, ['delivered']);
    const delivered = detail.events.filter((e) => e.type === 'delivery').flatMap((e) => e.data.recipients as string[]);
    expect(delivered.sort()).toEqual(['first@inbox.test', 'second@other.test']);
    expect(detail.events.filter((e) => e.type === 'bounce')).toEqual([]);
  });

  it('a receiver without the published DMARC policy still finds the mail aligned (p=none is advisory)', async () => {
    world.dns.set(`_dmarc.${SENDER}`, 'TXT', [recordOf(domain, 'dmarc').value]);
    try {
      await sendEmail(world.stack, { from: `x@${SENDER}`, to: ['advisory@inbox.test'] });
      const verdict = await receiverVerdict(world, await arrivalFor(world, 'advisory@inbox.test'));
      expect(verdict.dmarc, verdict.headers).toMatchObject({ status: 'pass', policy: 'none' });
    } finally {
      world.dns.set(`_dmarc.${SENDER}`, 'TXT', ['v=DMARC1; p=reject']);
    }
  });

  it('a domain whose records are not published is not verified, and its records say so', async () => {
    const res = await admin<{ id: string }>(world.stack, 'POST', `/accounts/${world.stack.accountId}/domains`, {
      name: 'unpublished.test',
    });
    const checked = await admin<DomainView>(world.stack, 'POST', `/domains/${res.body.id}/verify`, {});
    expect(checked.body.verified).toBe(false);
    for (const purpose of ['ownership', 'spf', 'dkim'])
      expect(['pending', 'failed']).toContain(recordOf(checked.body, purpose).status);
  });
});
