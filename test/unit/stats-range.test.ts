import { describe, expect, it } from 'vitest';
import { AppError } from '../../src/errors.js';
import { parseInstant, statsRange } from '../../src/services/stats-service.js';

/** GET /stats's from, to and group_by (docs/api.md "Stats"): whole UTC days, defaults, and each 400 naming its parameter. */
const NOW = new Date('2026-11-28T15:30:00Z');
const range = (from = '', to = '', groupBy = '') => statsRange({ from, to, groupBy }, NOW);
const refusal = (run: () => unknown): string => {
  try {
    run();
  } catch (err) {
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).kind).toBe('validation');
    return (err as AppError).message;
  }
  throw new Error('expected a refusal');
};

describe('stats range', () => {
  it('defaults to the last 30 UTC days with today, grouped by day', () => {
    expect(range()).toEqual({ fromDay: '2026-10-30', toDay: '2026-11-28', groupBy: 'day' });
    expect(range('', '2026-11-10T01:00:00Z', 'tag')).toEqual({
      fromDay: '2026-10-12',
      toDay: '2026-11-10',
      groupBy: 'tag',
    });
  });

  it('reads dates and date-times, a zone moving the UTC day, none meaning UTC', () => {
    expect(range('2026-11-01', '2026-11-02').fromDay).toBe('2026-11-01');
    expect(range('2026-11-01T01:00:00+02:00', '2026-11-02').fromDay).toBe('2026-10-31');
    expect(range('2026-11-01T23:30', '2026-11-02').fromDay).toBe('2026-11-01');
    expect(parseInstant('from', '2024-02-29').toISOString()).toBe('2024-02-29T00:00:00.000Z');
  });

  it('allows 90 days between from and to, not more', () => {
    expect(range('2026-01-01', '2026-04-01')).toMatchObject({ fromDay: '2026-01-01', toDay: '2026-04-01' });
    expect(refusal(() => range('2026-01-01', '2026-04-01T00:00:01Z'))).toMatch(/^from: the range .* is over 90 days$/);
  });

  it('refuses what is not a date, a day that does not exist, from after to, before 1970 and unknown groupings', () => {
    expect(refusal(() => range('yesterday'))).toMatch(/^from must be an ISO 8601 date/);
    expect(refusal(() => range('', '2026-02-29'))).toMatch(/^to must be an ISO 8601 date/);
    expect(refusal(() => range('2026-11-01T25:00:00Z'))).toMatch(/^from must be an ISO 8601 date/);
    expect(refusal(() => range('2026-11-03', '2026-11-02'))).toMatch(/^from \(2026-11-03T00:00:00.000Z\) is after to/);
    expect(refusal(() => range('1969-12-31', '1970-01-02'))).toMatch(/^from must be in 1970 or later/);
    expect(refusal(() => range('', '', 'week'))).toBe(
      'group_by must be one of day, domain, recipient_domain, tag, stream; got "week"',
    );
  });
});
