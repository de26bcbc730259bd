import { describe, expect, it } from 'vitest';
import { MAX_SCHEDULE_DAYS, parseScheduledAt } from '../../src/domain/schedule.js';
import { AppError } from '../../src/errors.js';

const now = new Date('2026-11-21T12:00:00.000Z');

function refusal(raw: string): string {
  try {
    parseScheduledAt(raw, now);
  } catch (err) {
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).kind).toBe('validation');
    return (err as AppError).message;
  }
  throw new Error(`"${raw}" was accepted`);
}

describe('parseScheduledAt', () => {
  it.each([
    ['2026-11-21T13:00:00Z', '2026-11-21T13:00:00.000Z'],
    ['2026-11-21t13:00:00z', '2026-11-21T13:00:00.000Z'],
    ['2026-11-21T13:00Z', '2026-11-21T13:00:00.000Z'],
    ['2026-11-21T13:00:00.250Z', '2026-11-21T13:00:00.250Z'],
    ['2026-11-21T18:30:00+05:30', '2026-11-21T13:00:00.000Z'],
    ['2026-11-21T08:00:00-0500', '2026-11-21T13:00:00.000Z'],
  ])('reads %s as %s', (raw, iso) => {
    expect(parseScheduledAt(raw, now).toISOString()).toBe(iso);
  });

  it.each([
    ['', 'scheduled_at is required'],
    ['tomorrow', 'not an ISO 8601 time'],
    ['2026-11-21 13:00:00Z', 'not an ISO 8601 time'],
    ['2026-11-21T13:00:00', 'not an ISO 8601 time'],
    ['2026-11-31T09:00:00Z', 'not an ISO 8601 time'],
    ['2026-02-29T09:00:00Z', 'not an ISO 8601 time'],
    ['2026-11-21T25:00:00Z', 'not an ISO 8601 time'],
    ['2026-11-21T12:00:00Z', 'is not in the future'],
    ['2026-11-21T11:59:59Z', 'is not in the future'],
    ['2026-12-22T12:00:01Z', `more than ${MAX_SCHEDULE_DAYS} days ahead`],
  ])('refuses %j (%s)', (raw, says) => {
    expect(refusal(raw)).toContain(says);
  });

  it('accepts a leap day that exists', () => {
    expect(parseScheduledAt('2028-02-29T09:00:00Z', new Date('2028-02-20T00:00:00Z')).toISOString()).toBe(
      '2028-02-29T09:00:00.000Z',
    );
  });
});
