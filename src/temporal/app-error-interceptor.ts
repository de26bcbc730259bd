import { ApplicationFailure } from '@temporalio/activity';
import type { ActivityInboundCallsInterceptor, ActivityInterceptorsFactory } from '@temporalio/worker';
import { AppError, ERROR_TABLE } from '../errors.js';

/**
 * An activity that throws an AppError fails as Temporal understands it: an ApplicationFailure typed by the
 * error's kind, retried only when the one error table says that kind is retryable (a database that is down
 * is worth another attempt; a validation error never is). Anything else is left to Temporal's defaults.
 */
export function appErrorToFailure(err: unknown): unknown {
  if (!(err instanceof AppError)) return err;
  return ApplicationFailure.create({
    message: err.message,
    type: err.kind,
    nonRetryable: !ERROR_TABLE[err.kind].retryable,
    cause: err.cause instanceof Error ? err.cause : undefined,
  });
}

const inbound: ActivityInboundCallsInterceptor = {
  async execute(input, next) {
    try {
      return await next(input);
    } catch (err) {
      throw appErrorToFailure(err);
    }
  },
};

export const appErrorInterceptor: ActivityInterceptorsFactory = () => ({ inbound });
