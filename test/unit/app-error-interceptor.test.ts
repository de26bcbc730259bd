import { ApplicationFailure } from '@temporalio/activity';
import { describe, expect, it } from 'vitest';
import { AppError } from '../../src/errors.js';
import { appErrorToFailure } from '../../src/temporal/app-error-interceptor.js';

describe('activities fail as the error table says', () => {
  it.each([
    ['validation', true],
    ['not_found', true],
    ['unavailable', false],
    ['internal', false],
  ] as const)('%s is nonRetryable: %s', (kind, nonRetryable) => {
    const failure = appErrorToFailure(new AppError(kind, `a ${kind} error`));
    expect(failure).toBeInstanceOf(ApplicationFailure);
    expect((failure as ApplicationFailure).type).toBe(kind);
    expect((failure as ApplicationFailure).message).toBe(`a ${kind} error`);
    expect((failure as ApplicationFailure).nonRetryable).toBe(nonRetryable);
  });

  it('leaves any other error to Temporal', () => {
    const err = new Error('socket closed');
    expect(appErrorToFailure(err)).toBe(err);
  });
});
