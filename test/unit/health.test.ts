import { describe, expect, it } from 'vitest';
import { aboveThresholds, HEALTH_POLICY, healthWindowStart, judgeHealth } from '../../src/domain/health.js';

const HOUR = 3_600_000;
const now = new Date('2026-11-21T12:00:00Z');
const ago = (hours: number) => new Date(now.getTime() - hours * HOUR);
const base = { statusChangedAt: ago(100), sent: 0, bounced: 0, complained: 0, complainants: 0, lastIssueAt: null, now };

describe('the account health policy', () => {
  it('judges nothing below the minimum volume, however bad', () => {
    expect(aboveThresholds({ sent: HEALTH_POLICY.minVolume - 1, bounced: 40, complained: 40 })).toBe(false);
    expect(judgeHealth({ ...base, status: 'healthy', sent: 49, bounced: 49 })).toBe('healthy');
  });

  it('healthy → review exactly at 4 % bounces or 0.08 % complaints', () => {
    expect(judgeHealth({ ...base, status: 'healthy', sent: 50, bounced: 2 })).toBe('review');
    expect(judgeHealth({ ...base, status: 'healthy', sent: 51, bounced: 2 })).toBe('healthy');
    expect(judgeHealth({ ...base, status: 'healthy', sent: 2500, complained: 2 })).toBe('review');
    expect(judgeHealth({ ...base, status: 'healthy', sent: 2501, complained: 2 })).toBe('healthy');
  });

  it('review → paused when it stays at a threshold, → healthy after 24 quiet hours, else stays', () => {
    expect(judgeHealth({ ...base, status: 'review', statusChangedAt: ago(1), sent: 50, bounced: 2 })).toBe('paused');
    expect(
      judgeHealth({ ...base, status: 'review', statusChangedAt: ago(25), sent: 10, bounced: 0, lastIssueAt: ago(30) }),
    ).toBe('healthy');
    expect(
      judgeHealth({ ...base, status: 'review', statusChangedAt: ago(25), sent: 10, bounced: 1, lastIssueAt: ago(2) }),
    ).toBe('review');
    expect(judgeHealth({ ...base, status: 'review', statusChangedAt: ago(23), sent: 0 })).toBe('review');
  });

  it('complaints alone never pause on fewer distinct complainants than the documented minimum (issue 22, item 2)', () => {
    const review = { ...base, status: 'review' as const, statusChangedAt: ago(1), sent: 60 };
    // Two complaints in 60 emails is far above 0.08 %, yet two people cannot pause an account.
    expect(judgeHealth({ ...review, complained: 2, complainants: 2 })).toBe('review');
    expect(judgeHealth({ ...review, complained: 4, complainants: HEALTH_POLICY.minComplainantsToPause - 1 })).toBe(
      'review',
    );
    expect(judgeHealth({ ...review, complained: 5, complainants: HEALTH_POLICY.minComplainantsToPause })).toBe(
      'paused',
    );
    // Bounces need no such minimum.
    expect(judgeHealth({ ...review, bounced: 3 })).toBe('paused');
  });

  it("judges each stream's mail alone as well as the whole (a broadcast complaint rate on broadcast mail)", () => {
    const none = { sent: 0, bounced: 0, complained: 0, complainants: 0 };
    // 3 complaints in 1,000 broadcast emails (0.3 %) hide below 0.08 % among 9,000 transactional ones more.
    const broadcast = { sent: 1000, bounced: 0, complained: 3, complainants: 3 };
    const transactional = { ...none, sent: 9000 };
    const whole = { ...base, sent: 10_000, complained: 3, complainants: 3 };
    expect(aboveThresholds(whole)).toBe(false);
    expect(judgeHealth({ ...whole, status: 'healthy' })).toBe('healthy');
    expect(judgeHealth({ ...whole, status: 'healthy', byStream: { transactional, broadcast } })).toBe('review');
    // The reverse: transactional complaints judged on transactional mail.
    expect(
      judgeHealth({
        ...whole,
        status: 'healthy',
        byStream: { transactional: { ...broadcast }, broadcast: { ...none, sent: 9000 } },
      }),
    ).toBe('review');
    // A stream is held to the minimum volume too.
    expect(
      judgeHealth({
        ...base,
        status: 'healthy',
        sent: 10_040,
        bounced: 20,
        byStream: { transactional: { ...none, sent: 10_000 }, broadcast: { ...none, sent: 40, bounced: 20 } },
      }),
    ).toBe('healthy');
    // In review, the stream at a threshold pauses when its own counts may (here its bounces).
    const bouncing = { sent: 100, bounced: 10, complained: 0, complainants: 0 };
    const review = { ...base, status: 'review' as const, statusChangedAt: ago(1), sent: 10_100, bounced: 10 };
    expect(judgeHealth(review)).toBe('review');
    expect(
      judgeHealth({ ...review, byStream: { transactional: { ...none, sent: 10_000 }, broadcast: bouncing } }),
    ).toBe('paused');
    // ... and not on complaints from fewer distinct people than the minimum.
    expect(judgeHealth({ ...review, bounced: 0, byStream: { broadcast: broadcast } })).toBe('review');
  });

  it('leaves paused and banned to operators', () => {
    expect(judgeHealth({ ...base, status: 'paused', sent: 1000, bounced: 0 })).toBe('paused');
    expect(judgeHealth({ ...base, status: 'banned', sent: 1000, bounced: 1000 })).toBe('banned');
  });

  it('counts from the last status change when it is inside the window', () => {
    expect(healthWindowStart(ago(2), now)).toEqual(ago(2));
    expect(healthWindowStart(ago(48), now)).toEqual(ago(HEALTH_POLICY.windowHours));
  });
});
