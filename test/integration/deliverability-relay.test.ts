import crypto from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  expectDkimPass,
  MAILER_HOSTNAME,
  recordOf,
  sendEmail,
  setUpSenderDomain,
  useMailWorld,
  verpPattern,
  waitForStatus,
  type DomainView,
  type MailWorld,
} from '../helpers/deliverability.js';
import { eventually } from '../helpers/http.js';
import { verifyAsReceiver } from '../helpers/mail-verifier.js';
import type { SinkMessage } from '../helpers/smtp-sink.js';

/**
 * Relay mode (all mail through SMTP_URL, here the stack's sink): the smart host passes the message on
 * unchanged, so what it gets must already be signed with the sender domain's DKIM key and carry the VERP
 * return path (CONTRACT.md, "Delivery, authentication and reports": every mode signs).
 */
const world = useMailWorld('relay');
let shop: DomainView;
let news: DomainView;

beforeAll(async () => {
  shop = await setUpSenderDomain(world, 'shop-relay.test');
  news = await setUpSenderDomain(world, 'news-relay.test');
});

/** The message the relay got for `recipient`. */
const relayed = (w: MailWorld, recipient: string) =>
  eventually(async () => w.stack.sink.messages.find((m) => m.envelopeTo.includes(recipient)), 45_000, 50);

/** A receiver behind the relay: DKIM (and DMARC through it) is what survives the extra hop. */
const verdictOf = (message: SinkMessage) =>
  verifyAsReceiver(message.raw, {
    ip: '127.0.0.1',
    helo: MAILER_HOSTNAME,
    mailFrom: message.envelopeFrom,
    dns: world.dns,
  });

describe('relay mode', () => {
  it('hands the relay a message DKIM-signed by the From domain, with the VERP envelope sender', async () => {
    const id = await sendEmail(world.stack, {
      from: 'Shop <x@shop-relay.test>',
      to: ['reader@example.net'],
      subject: 'Relayed',
    });
    const message = await relayed(world, 'reader@example.net');
    expect(message.envelopeFrom).toMatch(verpPattern('shop-relay.test'));
    expect(message.envelopeFrom.startsWith(`b-${id}.0-`)).toBe(true);
    const verdict = await verdictOf(message);
    expectDkimPass(verdict, 'shop-relay.test');
    expect(verdict.dkim.find((d) => d.domain === 'shop-relay.test')?.selector).toBe(
      recordOf(shop, 'dkim').name.split('._domainkey.')[0],
    );
    expect(verdict.dmarc, verdict.headers).toMatchObject({
      status: 'pass',
      policy: 'reject',
      domain: 'shop-relay.test',
    });
    await waitForStatus(world.stack, id, ['delivered']);
  });

  it('each sender domain signs with its own key', async () => {
    expect(recordOf(shop, 'dkim').value).not.toBe(recordOf(news, 'dkim').value);
    await sendEmail(world.stack, { from: 'x@news-relay.test', to: ['news-reader@example.net'] });
    const message = await relayed(world, 'news-reader@example.net');
    expect(message.envelopeFrom).toMatch(verpPattern('news-relay.test'));
    expectDkimPass(await verdictOf(message), 'news-relay.test');
  });

  it('the signature covers a multipart message with non-ASCII text, HTML and an attachment', async () => {
    await sendEmail(world.stack, {
      from: 'Shop <x@shop-relay.test>',
      to: ['rich@example.net'],
      subject: 'Grüße aus Köln — 日本語',
      text: 'Straße, Café, naïve.\nA long line '.concat('x'.repeat(200)),
      html: '<p>Grüße <b>aus</b> Köln</p>',
      attachments: [
        {
          filename: 'notes.txt',
          content_type: 'text/plain',
          content: Buffer.from('line one\nline two\n').toString('base64'),
        },
      ],
    });
    const message = await relayed(world, 'rich@example.net');
    expect(message.parsed.attachments.map((a) => a.filename)).toEqual(['notes.txt']);
    expectDkimPass(await verdictOf(message), 'shop-relay.test');
  });

  it("the receiver's pass depends on the published key: another key in DNS and the signature no longer verifies", async () => {
    await sendEmail(world.stack, { from: 'x@shop-relay.test', to: ['keycheck@example.net'] });
    const message = await relayed(world, 'keycheck@example.net');
    const dkim = recordOf(shop, 'dkim');
    const other = crypto
      .generateKeyPairSync('rsa', { modulusLength: 2048 })
      .publicKey.export({ type: 'spki', format: 'der' })
      .toString('base64');
    world.dns.set(dkim.name, 'TXT', [`v=DKIM1; k=rsa; p=${other}`]);
    try {
      const verdict = await verdictOf(message);
      expect(verdict.dkim.find((d) => d.domain === 'shop-relay.test')?.status, verdict.headers).toBe('fail');
    } finally {
      world.dns.set(dkim.name, 'TXT', [dkim.value]);
    }
    expectDkimPass(await verdictOf(message), 'shop-relay.test');
  });
});
