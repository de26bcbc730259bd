import { describe, expect, it } from 'vitest';
import { isDatabaseUnavailable } from '../../src/db/db-unavailable.js';
import { toAppError } from '../../src/errors.js';

describe('isDatabaseUnavailable', () => {
  it('recognises server shutdown and connection SQLSTATEs and wrapped socket errors; not faults of the statement', () => {
    const pgError = (code: string) => Object.assign(new Error('x'), { name: 'PostgresError', code });
    for (const code of ['57P01', '57P02', '57P03', '08006', '08001', '53300'])
      expect(isDatabaseUnavailable(pgError(code)), code).toBe(true);
    for (const code of ['23505', '42601', '22P02', '40001', '57014'])
      expect(isDatabaseUnavailable(pgError(code)), code).toBe(false);
    const refused = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    expect(isDatabaseUnavailable(new AggregateError([refused]))).toBe(true);
    expect(isDatabaseUnavailable(new Error('wrapped', { cause: refused }))).toBe(true);
    expect(isDatabaseUnavailable(new Error('plain'))).toBe(false);
    expect(toAppError(new Error('plain')).status).toBe(500);
  });
});
