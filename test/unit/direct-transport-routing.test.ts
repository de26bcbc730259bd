import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { createDirectTransport } from '../../src/delivery/transport/direct/direct-transport.js';
import { isTlsFailure, judgeFailure } from '../../src/delivery/transport/direct/target-attempt.js';
import type { MailTransport } from '../../src/delivery/transport/transport.js';
import { fakeDnsResolver, type FakeZone } from '../helpers/fake-dns-resolver.js';

// Every case here is settled by DNS alone: no SMTP connection is ever made (the targets are refused or absent).
let transport: MailTransport | undefined;
afterEach(() => transport?.close());

function direct(zone: FakeZone) {
  const resolver = fakeDnsResolver(zone);
  transport = createDirectTransport({
    resolver,
    port: 25,
    name: 'mailer.test',
    allowPrivate: false,
    logger: pino({ level: 'silent' }),
  });
  return { transport, resolver };
}

const message = (to: string[]) => ({
  messageId: '<m1@mailer.test>',
  envelope: { from: 'b-token@rp.mailer.test', to },
  raw: Buffer.from('Subject: s\r\n\r\nt\r\n'),
});

describe('direct transport: routing decided by DNS', () => {
  it("sorts each domain's recipients by what its DNS says, asking each domain once", async () => {
    const { transport, resolver } = direct({
      mx: {
        'nullmx.test': [{ exchange: '.', priority: 0 }],
        'inside.test': [{ exchange: 'mx.inside.test', priority: 10 }],
      },
      a: { 'mx.inside.test': ['192.168.7.7'] },
      failing: ['servfail.test'],
    });
    const result = await transport.send(
      message(['a@nullmx.test', 'b@SERVFAIL.test', 'c@inside.test', 'd@NullMX.test', 'e@nowhere.test', 'nodomain']),
    );
    expect(result.messageId).toBe('<m1@mailer.test>');
    expect(result.accepted).toEqual([]);
    const byAddress = Object.fromEntries([...result.refused, ...result.deferred].map((r) => [r.address, r.failure]));
    expect(Object.keys(byAddress).sort()).toEqual([
      'a@nullmx.test',
      'b@SERVFAIL.test',
      'c@inside.test',
      'd@NullMX.test',
      'e@nowhere.test',
      'nodomain',
    ]);
    expect(byAddress['a@nullmx.test']).toMatchObject({ kind: 'hard', code: 556, status: '5.1.10' });
    expect(byAddress['d@NullMX.test']).toMatchObject({ kind: 'hard', code: 556, status: '5.1.10' });
    expect(byAddress['b@SERVFAIL.test']).toMatchObject({ kind: 'soft', status: '4.4.3' });
    expect(byAddress['c@inside.test']).toMatchObject({ kind: 'soft', code: 0 });
    expect(byAddress['e@nowhere.test']).toMatchObject({ kind: 'hard', status: '5.1.2' });
    expect(byAddress['nodomain']).toMatchObject({ kind: 'hard', status: '5.1.3' });
    expect(result.refused.map((r) => r.address).sort()).toEqual([
      'a@nullmx.test',
      'd@NullMX.test',
      'e@nowhere.test',
      'nodomain',
    ]);
    expect(resolver.lookups.filter((l) => l.startsWith('MX ')).sort()).toEqual([
      'MX inside.test',
      'MX nowhere.test',
      'MX nullmx.test',
      'MX servfail.test',
    ]);
  });
});

describe('judgeFailure: what a failed transaction means for its recipients', () => {
  const rcpts = ['a@x.test', 'b@x.test'];

  it('a 5xx to MAIL FROM or DATA refuses every recipient, no other host tried', () => {
    for (const command of ['MAIL FROM', 'DATA']) {
      const verdict = judgeFailure(
        { code: 'EENVELOPE', responseCode: 554, response: '554 5.7.1 rejected', command },
        rcpts,
      );
      expect(verdict).toMatchObject({
        done: true,
        accepted: [],
        failed: [{ address: 'a@x.test', failure: { kind: 'hard', code: 554 } }, { address: 'b@x.test' }],
      });
    }
  });

  it('a 4xx, a connection failure or a 5xx greeting sends the transaction to the next host', () => {
    expect(
      judgeFailure(
        { code: 'EENVELOPE', responseCode: 451, response: '451 4.7.1 greylisted', command: 'MAIL FROM' },
        rcpts,
      ),
    ).toMatchObject({ done: false, failure: { kind: 'soft', code: 451 } });
    expect(judgeFailure({ code: 'ESOCKET', message: 'connect ECONNREFUSED', command: 'CONN' }, rcpts)).toMatchObject({
      done: false,
      failure: { kind: 'soft', code: 0 },
    });
    expect(
      judgeFailure({ code: 'EPROTOCOL', responseCode: 554, response: '554 no service', command: 'CONN' }, rcpts),
    ).toMatchObject({ done: false, failure: { kind: 'hard' } });
  });

  it('every recipient refused at RCPT: each keeps its own reply', () => {
    const err = {
      code: 'EENVELOPE',
      responseCode: 450,
      response: '450 4.2.0 try later',
      command: 'RCPT TO',
      rejected: rcpts,
      rejectedErrors: [
        { responseCode: 550, response: '550 5.1.1 unknown' },
        { responseCode: 450, response: '450 4.2.0 try later' },
      ],
    };
    expect(judgeFailure(err, rcpts)).toMatchObject({
      done: true,
      failed: [
        { address: 'a@x.test', failure: { kind: 'hard', status: '5.1.1' } },
        { address: 'b@x.test', failure: { kind: 'soft' } },
      ],
    });
  });
});

describe('isTlsFailure: when a plain-text retry is worth it', () => {
  it("recognises nodemailer's ETLS and OpenSSL handshake errors, and nothing else", () => {
    expect(isTlsFailure({ code: 'ETLS', message: 'Error initiating TLS' })).toBe(true);
    expect(isTlsFailure({ code: 'ESOCKET', originalCode: 'ERR_SSL_TLSV1_ALERT_PROTOCOL_VERSION', message: 'x' })).toBe(
      true,
    );
    expect(
      isTlsFailure({
        code: 'ESOCKET',
        message: 'Client network socket disconnected before secure TLS connection was established',
      }),
    ).toBe(true);
    expect(isTlsFailure({ code: 'ESOCKET', message: 'connect ECONNREFUSED 127.0.0.2:25' })).toBe(false);
    expect(isTlsFailure({ code: 'EENVELOPE', responseCode: 451, message: 'greylisted' })).toBe(false);
  });
});
