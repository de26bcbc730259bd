import fs from 'node:fs';
import path from 'node:path';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import type { EmailStatus } from '../../src/domain/catalog.js';
import { createInboundFeedbackService } from '../../src/services/inbound-feedback-service.js';

const fixture = (name: string) => fs.readFileSync(path.join(import.meta.dirname, '../fixtures/feedback', name));

function setup(email: { id: string; status: EmailStatus; recipients: string[] } | undefined) {
  const calls: { kind: string; input: unknown }[] = [];
  const service = createInboundFeedbackService({
    emails: { findForFeedback: async () => email },
    feedback: {
      complaint: async (input) => (calls.push({ kind: 'complaint', input }), true),
      bounce: async (input) => (calls.push({ kind: 'bounce', input }), true),
    },
    logger: pino({ level: 'silent' }),
  });
  return { service, calls };
}

describe('inbound feedback', () => {
  it('records one bounce per bounce type of a report', async () => {
    const { service, calls } = setup({ id: 'em_1', status: 'delivered', recipients: [] });
    expect(await service.receive(fixture('dsn-mixed.eml'))).toBe('recorded');
    expect(calls).toEqual([
      { kind: 'bounce', input: { emailId: 'em_1', bounceType: 'Permanent', recipients: [expect.objectContaining({ email_address: 'gone@outlook.example', status: '5.1.10' })] } },
      { kind: 'bounce', input: { emailId: 'em_1', bounceType: 'Transient', recipients: [expect.objectContaining({ email_address: 'full@outlook.example', status: '4.2.2' })] } },
    ]);
    expect(Object.keys((calls[0]!.input as { recipients: object[] }).recipients[0]!).sort()).toEqual(['diagnostic_code', 'email_address', 'status']);
  });

  it('names nobody in a redacted complaint about an email with several recipients', async () => {
    const { service, calls } = setup({ id: 'em_1', status: 'delivered', recipients: ['a@example.net', 'B <b@example.net>'] });
    await service.receive(fixture('arf-headers-only.eml'));
    expect(calls).toEqual([{ kind: 'complaint', input: { emailId: 'em_1', recipients: [], feedbackType: 'fraud' } }]);
  });

  it('asks to retry while the delivery is not recorded, and ignores what it cannot use', async () => {
    await expect(setup({ id: 'em_1', status: 'pending', recipients: [] }).service.receive(fixture('dsn-postfix.eml'))).rejects.toThrow(/try again later/);
    const { service, calls } = setup(undefined);
    expect(await service.receive(fixture('dsn-postfix.eml'))).toBe('unknown-email');
    expect(await service.receive(fixture('read-receipt.eml'))).toBe('not-a-report');
    expect(calls).toEqual([]);
  });
});
