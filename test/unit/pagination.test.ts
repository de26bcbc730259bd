import { describe, expect, it } from 'vitest';
import { toPage } from '../../src/domain/pagination.js';
import { AppError } from '../../src/errors.js';

function refusal(page: number, size: number): AppError {
  try {
    toPage(page, size, 'page_size');
  } catch (err) {
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).status).toBe(400);
    return err as AppError;
  }
  throw new Error('expected toPage to refuse');
}

describe('toPage', () => {
  it('defaults to page 1 with 20 items when neither is given (0)', () => {
    expect(toPage(0, 0, 'page_size')).toEqual({ limit: 20, offset: 0 });
  });

  it.each([
    [1, 20, { limit: 20, offset: 0 }],
    [2, 20, { limit: 20, offset: 20 }],
    [3, 0, { limit: 20, offset: 40 }],
    [1, 1, { limit: 1, offset: 0 }],
    [0, 100, { limit: 100, offset: 0 }],
    [5, 100, { limit: 100, offset: 400 }],
  ])('page %i, size %i', (page, size, expected) => {
    expect(toPage(page, size, 'page_size')).toEqual(expected);
  });

  it('refuses a size over 100, naming the parameter, the value and the maximum', () => {
    const err = refusal(1, 101);
    expect(err.message).toContain('page_size');
    expect(err.message).toContain('101');
    expect(err.message).toContain('100');
  });

  it('names the parameter it is given (limit for the scheduled list)', () => {
    expect(() => toPage(1, 500, 'limit')).toThrow(/^limit /);
  });

  it('refuses negative values', () => {
    expect(refusal(-1, 10).message).toContain('page');
    expect(refusal(1, -1).message).toContain('page_size');
  });

  it('refuses absurdly deep pages', () => {
    expect(refusal(2_000_000_000, 100).message).toContain('too large');
  });
});
