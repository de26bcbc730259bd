import { generateKeyPairSync } from 'node:crypto';
import { authenticate } from 'mailauth';
import DKIM from 'nodemailer/lib/dkim';
import RelaxedBody from 'nodemailer/lib/dkim/relaxed-body';
import { describe, expect, it } from 'vitest';
import { composeMessage } from '../../src/delivery/message/compose.js';
import { dkimSignBuffer, relaxedBody } from '../../src/delivery/dkim/dkim-sign-buffer.js';
import { renderMessage } from '../../src/delivery/message/render-message.js';
import type { EmailRow } from '../../src/domain/entities/emails.js';

/** nodemailer's streaming body hash, the reference the one-pass canonicalization must match. */
function streamedHash(body: Buffer): Promise<string> {
  return new Promise((resolve) => {
    const hasher = new RelaxedBody({ hashAlgo: 'sha256' });
    hasher.on('hash', (hash: string) => resolve(hash));
    hasher.resume();
    hasher.end(body);
  });
}

const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const dkimKey = {
  domainName: 'example.com',
  keySelector: 's1',
  privateKey: privateKey.export({ type: 'pkcs8', format: 'pem' }) as string,
};
const txt = `v=DKIM1; k=rsa; p=${(publicKey.export({ type: 'spki', format: 'der' }) as Buffer).toString('base64')}`;

const email = {
  id: 'em_1',
  accountId: 'acc',
  senderDomain: 'example.com',
  subject: 'Grüße   with  spaces \t and a long subject line that nodemailer folds over several header lines',
  from: { name: 'Shop', address: 'shop@example.com' },
  to: [{ name: 'Alice', address: 'alice@example.org' }],
  cc: [],
  bcc: [],
  replyTo: [],
  html: '<p>Hello  Alice \t</p>\n\n\n',
  text: 'Hello   Alice  \r\n\r\n  trailing   \n\n',
  headers: { 'X-Custom': 'a   b' },
  headerMessageId: '<m1@example.com>',
  createdAt: new Date('2026-01-02T03:04:05Z'),
} as unknown as EmailRow;

describe('relaxedBody (one pass over the built body)', () => {
  it("hashes exactly as nodemailer's streaming RelaxedBody, over bodies of whitespace, CR and LF runs", async () => {
    const alphabet = [' ', '\t', '\r', '\n', 'a', 'é', '\r\n'];
    let seed = 7;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31);
    const bodies = ['', '\r\n', '\r\n\r\n', ' ', 'a', 'a \r', 'a\r \n', ' \r\n x \r\n\r\n \r\n'];
    for (let i = 0; i < 400; i++)
      bodies.push(Array.from({ length: next() % 30 }, () => alphabet[next() % alphabet.length]).join(''));
    for (const body of bodies) {
      const buffer = Buffer.from(body, 'latin1');
      const ours = (await import('node:crypto')).createHash('sha256').update(relaxedBody(buffer)).digest('base64');
      expect(ours, JSON.stringify(body)).toBe(await streamedHash(buffer));
    }
  });
});

/** nodemailer's own DKIM stream signer over a whole message: the reference for the one-pass signer. */
async function streamSigned(message: Buffer, options: object): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of new DKIM(options as never).sign(message)) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

describe('dkimSignBuffer', () => {
  it("writes what nodemailer's DKIM stream writes, byte for byte (RSA PKCS#1 v1.5 signatures are deterministic)", async () => {
    const unsigned = (
      await renderMessage(
        composeMessage(email, [], {
          envelopeTo: ['alice@example.org'],
          reportToken: 'tok',
          returnPath: 'b+tok@example.com',
          dkim: undefined,
        }),
      )
    ).raw as Buffer;
    for (const options of [
      dkimKey,
      { ...dkimKey, domainName: 'EXAMPLE.com', headerFieldNames: 'From:To:Subject:Message-ID:X-Custom' },
      { ...dkimKey, skipFields: 'Subject:Date' },
    ]) {
      const ours = await dkimSignBuffer(unsigned, options);
      expect(ours.toString('latin1')).toBe((await streamSigned(unsigned, options)).toString('latin1'));
    }
  });

  it('leaves the message unsigned when the key cannot sign', async () => {
    const message = Buffer.from('From: a@example.com\r\nSubject: x\r\n\r\nbody\r\n');
    expect(await dkimSignBuffer(message, { ...dkimKey, privateKey: 'not a key' })).toBe(message);
  });
});

describe('renderMessage', () => {
  it('signs the built message with a DKIM signature mailauth verifies', async () => {
    const attachments = [
      { filename: 'a.txt', content: Buffer.from('attached  \n\n'), contentType: 'text/plain', contentId: '' },
    ];
    const rendered = await renderMessage(
      composeMessage(email, attachments as never, {
        envelopeTo: ['alice@example.org'],
        reportToken: 'tok',
        returnPath: 'b+tok@example.com',
        dkim: dkimKey,
      }),
    );
    const raw = rendered.raw as Buffer;
    expect(raw.toString('latin1')).toMatch(/^DKIM-Signature: v=1; a=rsa-sha256; c=relaxed\/relaxed; d=example.com;/);
    expect(rendered.messageId).toBe('<m1@example.com>');
    const result = await authenticate(raw, {
      ip: '127.0.0.1',
      helo: 'mailer.test',
      sender: 'b+tok@example.com',
      mta: 'mx.test',
      disableArc: true,
      disableBimi: true,
      resolver: async (name: string, type: string) => {
        if (name === 's1._domainkey.example.com' && type === 'TXT') return [[txt]];
        throw Object.assign(new Error(`no ${type} record for ${name}`), { code: 'ENOTFOUND' });
      },
    });
    expect(result.dkim.results.map((r) => r.status.result)).toEqual(['pass']);
  });

  it('leaves a message unsigned when the email has no key, ending it with a line break', async () => {
    const rendered = await renderMessage(
      composeMessage(email, [], {
        envelopeTo: ['alice@example.org'],
        reportToken: 'tok',
        returnPath: 'b+tok@example.com',
        dkim: undefined,
      }),
    );
    const raw = (rendered.raw as Buffer).toString('latin1');
    expect(raw).not.toContain('DKIM-Signature');
    expect(raw).toContain('Message-ID: <m1@example.com>');
    expect(raw.endsWith('\r\n')).toBe(true);
  });
});
