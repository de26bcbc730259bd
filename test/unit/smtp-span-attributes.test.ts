import { describe, expect, it } from 'vitest';
import { smtpSpanAttributes } from '../../src/delivery/transport/smtp-span-attributes.js';

describe('the attributes of an SMTP hand-over span', () => {
  it('names the relay, the accepting reply and the counts', () => {
    expect(
      smtpSpanAttributes(
        {
          messageId: '<m@x>',
          accepted: [{ address: 'a@x.test', response: '250 2.0.0 Ok: queued as 123' }],
          refused: [
            {
              address: 'b@x.test',
              failure: { kind: 'hard', code: 550, status: '5.1.1', diagnostic: '550 5.1.1 no such user' },
            },
          ],
          deferred: [],
        },
        'smtp.relay.test',
      ),
    ).toEqual({
      'server.address': 'smtp.relay.test',
      'mailer.smtp.reply_code': 250,
      'mailer.smtp.reply': '250 2.0.0 Ok: queued as 123',
      'mailer.smtp.accepted': 1,
      'mailer.smtp.refused': 1,
      'mailer.smtp.deferred': 0,
    });
  });

  it('in direct mode names each MX that accepted, and without an acceptance the first failure', () => {
    expect(
      smtpSpanAttributes(
        {
          messageId: '',
          accepted: [
            { address: 'a@x.test', response: '250 ok', mx: 'mx1.x.test' },
            { address: 'c@y.test', response: '250 ok', mx: 'mx.y.test' },
          ],
          refused: [],
          deferred: [],
        },
        undefined,
      ),
    ).toMatchObject({
      'server.address': 'mx1.x.test,mx.y.test',
      'mailer.smtp.reply_code': 250,
      'mailer.smtp.accepted': 2,
    });
    const deferred = smtpSpanAttributes(
      {
        messageId: '',
        accepted: [],
        refused: [],
        deferred: [
          {
            address: 'a@x.test',
            failure: { kind: 'soft', code: 0, status: '4.4.1', diagnostic: 'connect ECONNREFUSED' },
          },
        ],
      },
      undefined,
    );
    expect(deferred).toEqual({
      'mailer.smtp.reply_code': 0,
      'mailer.smtp.reply': 'connect ECONNREFUSED',
      'mailer.smtp.accepted': 0,
      'mailer.smtp.refused': 0,
      'mailer.smtp.deferred': 1,
    });
  });
});
