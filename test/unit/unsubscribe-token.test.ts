import { generateKeyPairSync } from 'node:crypto';
import { authenticate } from 'mailauth';
import { describe, expect, it } from 'vitest';
import { composeMessage } from '../../src/delivery/message/compose.js';
import { createReportTokens } from '../../src/delivery/message/report-token.js';
import { renderMessage } from '../../src/delivery/message/render-message.js';
import {
  createUnsubscribeTokens,
  isUnsubscribeAddress,
  listUnsubscribeHeaders,
  listUnsubscribeOf,
  MAX_UNSUBSCRIBE_TOKEN_CHARS,
  parseUnsubscribeAddress,
} from '../../src/delivery/message/unsubscribe-token.js';
import type { EmailRow } from '../../src/domain/entities/emails.js';

const ID = 'em_01jbq7m3k2x9f5v8r4t6w0y2zc';
const SECRET = 'unsubscribe-token-unit-test-secret';
const tokens = createUnsubscribeTokens(SECRET);

describe('unsubscribe tokens', () => {
  it('name the email they were signed for, in lower case, and survive a change of case', () => {
    const token = tokens.sign(ID);
    expect(token).toMatch(/^em_01jbq7m3k2x9f5v8r4t6w0y2zc-[a-z2-7]{24}$/);
    expect(tokens.verify(token)).toBe(ID);
    expect(tokens.verify(token.toUpperCase())).toBe(ID);
  });

  it('refuse a forged, altered, truncated or padded token', () => {
    const token = tokens.sign(ID);
    const mac = token.slice(token.lastIndexOf('-') + 1);
    // Another email under this email's mac.
    expect(tokens.verify(`em_01jbq7m3k2x9f5v8r4t6w0y2zd-${mac}`)).toBeUndefined();
    // One character of the mac changed.
    const flipped = mac.startsWith('a') ? `b${mac.slice(1)}` : `a${mac.slice(1)}`;
    expect(tokens.verify(`${ID}-${flipped}`)).toBeUndefined();
    for (const bad of [
      '',
      '-',
      ID,
      `${ID}-`,
      `-${mac}`,
      `${ID}-${mac.slice(1)}`,
      `${ID}-${mac}a`,
      `${ID}-${mac}-${mac}`,
      `${ID}.0-${mac}`,
      `${ID} -${mac}`,
      `${'a'.repeat(MAX_UNSUBSCRIBE_TOKEN_CHARS)}-${mac}`,
      `${ID}-${'1'.repeat(24)}`,
      '%00',
    ]) {
      expect(tokens.verify(bad), bad).toBeUndefined();
    }
  });

  it('are not the report tokens, nor valid under another secret', () => {
    const reports = createReportTokens(SECRET);
    expect(tokens.verify(reports.sign(ID))).toBeUndefined();
    expect(reports.verify(tokens.sign(ID))).toBeUndefined();
    expect(createUnsubscribeTokens('another-secret-of-enough-bytes').verify(tokens.sign(ID))).toBeUndefined();
  });

  it('refuse to sign what is no email id, and a short secret', () => {
    expect(() => tokens.sign('em_X')).toThrow();
    expect(() => tokens.sign('em-1')).toThrow();
    expect(() => createUnsubscribeTokens('short')).toThrow();
  });
});

describe('the List-Unsubscribe URL and address', () => {
  it('put the token under the tracking URL and in an unsub- address at the return-path domain', () => {
    const links = listUnsubscribeOf(tokens, ID, 'https://track.example.net/base/?q=1#f', 'rp.shop.example');
    const token = tokens.sign(ID);
    expect(links).toEqual({
      url: `https://track.example.net/base/u/${token}`,
      mailto: `unsub-${token}@rp.shop.example`,
    });
    // Within RFC 5321's 64-character local part.
    expect(links.mailto.split('@')[0]!.length).toBeLessThanOrEqual(64);
    expect(listUnsubscribeHeaders(links)).toEqual({
      'List-Unsubscribe': `<${links.url}>, <mailto:${links.mailto}>`,
      'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
    });
  });

  it('is parsed back to the email at any domain and in any case, and nothing else is', () => {
    const address = listUnsubscribeOf(tokens, ID, 'http://localhost:3000', 'bounces.example').mailto;
    expect(parseUnsubscribeAddress(tokens, address)).toBe(ID);
    expect(parseUnsubscribeAddress(tokens, address.toUpperCase())).toBe(ID);
    expect(parseUnsubscribeAddress(tokens, address.replace('@bounces.example', '@other.example'))).toBe(ID);
    expect(isUnsubscribeAddress('unsub-x@d')).toBe(true);
    expect(isUnsubscribeAddress('b-x@d')).toBe(false);
    expect(parseUnsubscribeAddress(tokens, `unsub-${ID}-aaaaaaaaaaaaaaaaaaaaaaaa@d`)).toBeUndefined();
    expect(parseUnsubscribeAddress(tokens, `b-${tokens.sign(ID)}@d`)).toBeUndefined();
    expect(parseUnsubscribeAddress(tokens, `unsub-${'a'.repeat(80)}@d`)).toBeUndefined();
  });
});

const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const dkimKey = {
  domainName: 'example.com',
  keySelector: 's1',
  privateKey: privateKey.export({ type: 'pkcs8', format: 'pem' }) as string,
};
const txt = `v=DKIM1; k=rsa; p=${(publicKey.export({ type: 'spki', format: 'der' }) as Buffer).toString('base64')}`;

const email = {
  id: ID,
  accountId: 'acc',
  senderDomain: 'example.com',
  subject: 'News',
  from: { name: 'Shop', address: 'shop@example.com' },
  to: [{ name: 'Alice', address: 'alice@example.org' }],
  cc: [],
  bcc: [],
  replyTo: [],
  html: '',
  text: 'Hello',
  // What a caller might try: its own unsubscribe target, in two spellings, and a one-click claim.
  headers: {
    'list-unsubscribe': '<https://evil.example/u>',
    'LIST-UNSUBSCRIBE': '<mailto:evil@evil.example>',
    'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
    'X-Campaign': 'spring',
  },
  headerMessageId: '<m1@example.com>',
  createdAt: new Date('2026-01-02T03:04:05Z'),
} as unknown as EmailRow;

const links = listUnsubscribeOf(tokens, ID, 'https://track.example.net', 'rp.example.com');

async function built(unsubscribe: typeof links | undefined) {
  const rendered = await renderMessage(
    composeMessage(email, [], {
      envelopeTo: ['alice@example.org'],
      reportToken: 'tok',
      returnPath: 'b-tok@rp.example.com',
      dkim: dkimKey,
      ...(unsubscribe ? { unsubscribe } : {}),
    }),
  );
  return rendered.raw as Buffer;
}

/** The values of a header field in a raw message (unfolded), every instance. */
function fieldValues(raw: Buffer, name: string): string[] {
  const head = raw
    .toString('latin1')
    .split('\r\n\r\n')[0]!
    .replace(/\r\n[ \t]+/g, ' ');
  return head
    .split('\r\n')
    .filter((line) => line.toLowerCase().startsWith(`${name.toLowerCase()}:`))
    .map((line) => line.slice(name.length + 1).trim());
}

describe('composeMessage with a List-Unsubscribe pair (broadcast mail)', () => {
  it("writes the service's two fields once each, in place of the caller's, and signs both", async () => {
    const raw = await built(links);
    expect(fieldValues(raw, 'List-Unsubscribe')).toEqual([`<${links.url}>, <mailto:${links.mailto}>`]);
    expect(fieldValues(raw, 'List-Unsubscribe-Post')).toEqual(['List-Unsubscribe=One-Click']);
    expect(fieldValues(raw, 'X-Campaign')).toEqual(['spring']);
    const result = await authenticate(raw, {
      ip: '127.0.0.1',
      helo: 'mailer.test',
      sender: 'b-tok@rp.example.com',
      mta: 'mx.test',
      disableArc: true,
      disableBimi: true,
      resolver: async (name: string, type: string) => {
        if (name === 's1._domainkey.example.com' && type === 'TXT') return [[txt]];
        throw Object.assign(new Error(`no ${type} record for ${name}`), { code: 'ENOTFOUND' });
      },
    });
    expect(result.dkim.results.map((r) => r.status.result)).toEqual(['pass']);
    // The signature's h= list (the one signature mailauth just verified) names both fields.
    const dkimField = fieldValues(raw, 'DKIM-Signature')[0] ?? '';
    const signed = (/\bh=([^;]*)/.exec(dkimField)?.[1] ?? '')
      .toLowerCase()
      .split(':')
      .map((k) => k.trim());
    expect(signed).toEqual(expect.arrayContaining(['list-unsubscribe', 'list-unsubscribe-post']));
  });

  it('leaves transactional mail without the pair: the caller’s own headers pass as given', async () => {
    const raw = await built(undefined);
    expect(fieldValues(raw, 'List-Unsubscribe')).toEqual(['<https://evil.example/u>', '<mailto:evil@evil.example>']);
    expect(raw.toString('latin1')).not.toContain(links.url);
  });
});
