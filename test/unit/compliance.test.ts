import { describe, expect, it } from 'vitest';
import { COMPLIANCE, complianceOf } from '../../src/domain/compliance.js';

describe('compliance at a glance', () => {
  it('gives each stream its complaint and unsubscribe rates, and whether it is over the 0.3 % line', () => {
    const c = complianceOf({
      transactional: { sent: 0, complained: 0, unsubscribed: 0 },
      broadcast: { sent: 1000, complained: 3, unsubscribed: 12 },
    });
    expect(c).toEqual({
      windowDays: 7,
      complaintRateLimit: 0.003,
      streams: [
        {
          stream: 'transactional',
          sent: 0,
          complained: 0,
          unsubscribed: 0,
          complaintRate: 0,
          unsubscribeRate: 0,
          overComplaintLimit: false,
        },
        {
          stream: 'broadcast',
          sent: 1000,
          complained: 3,
          unsubscribed: 12,
          complaintRate: 0.003,
          unsubscribeRate: 0.012,
          overComplaintLimit: true,
        },
      ],
    });
    const under = complianceOf({
      transactional: { sent: 1001, complained: 3, unsubscribed: 0 },
      broadcast: { sent: 0, complained: 0, unsubscribed: 0 },
    });
    expect(under.streams[0]!.complaintRate).toBeLessThan(COMPLIANCE.complaintRateLimit);
    expect(under.streams[0]!.overComplaintLimit).toBe(false);
  });
});
