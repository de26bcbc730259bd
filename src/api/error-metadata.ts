import type { RateDecision } from '../domain/rate-decision.js';
import type { AppError } from '../errors.js';

/**
 * The names under which both adapters tell a caller its rate and when to retry: REST as response headers,
 * gRPC as metadata under the same lowercase names, so that a caller of either reads the same thing.
 */
export function rateMetadata(rate: RateDecision): Record<string, string> {
  return {
    'ratelimit-limit': String(rate.limit),
    'ratelimit-remaining': String(rate.remaining),
    'ratelimit-reset': String(rate.reset),
  };
}

/** What an error says besides its status and body: the caller's rate on a refusal by it, and when to retry. */
export function errorMetadata(err: AppError): Record<string, string> {
  return {
    ...(err.rate ? rateMetadata(err.rate) : {}),
    ...(err.retryAfterSeconds !== undefined ? { 'retry-after': String(err.retryAfterSeconds) } : {}),
  };
}
