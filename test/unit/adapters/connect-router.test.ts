import { Code, ConnectError, createClient } from '@connectrpc/connect';
import { describe, expect, it } from 'vitest';
import { EmailService } from '../../../src/gen/mail/v1/email_service_pb.js';
import { SENT_ID, TEST_KEY } from '../../helpers/fake-api-deps.js';
import { createTestConnectTransport } from '../../helpers/in-memory-apps.js';

/** The same handlers over Connect in memory (`createRouterTransport`): what a Connect client sees. */

const email = { from: 'Sender <sender@example.com>', to: ['a@example.net'], subject: 'Hello', text: 'Hi' };
const bearer = { headers: { authorization: `Bearer ${TEST_KEY}` } };

async function refusal(call: Promise<unknown>): Promise<ConnectError> {
  try {
    await call;
  } catch (err) {
    return ConnectError.from(err);
  }
  throw new Error('expected the call to fail');
}

describe('Connect router (in memory)', () => {
  it("refuses a call without a key with Unauthenticated and the spec's message", async () => {
    const { transport, sent } = createTestConnectTransport();
    const err = await refusal(createClient(EmailService, transport).sendEmail(email));
    expect(err.code).toBe(Code.Unauthenticated);
    expect(err.rawMessage).toBe('Invalid or missing API key');
    expect(sent).toEqual([]);
  });

  it("answers SendEmail with the handler's result, as the REST app does", async () => {
    const { transport, sent } = createTestConnectTransport();
    const res = await createClient(EmailService, transport).sendEmail(email, bearer);
    expect(res).toMatchObject({ id: SENT_ID, messageId: '', status: 'pending' });
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatchObject({ from: email.from, to: email.to, subject: 'Hello' });
  });
});
