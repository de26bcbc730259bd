import type { RateDecision } from './domain/rate-decision.js';

/**
 * One error type for the whole service, and the one table that says how each kind of failure is
 * answered over HTTP and gRPC. Adapters map AppError once at their boundary; nothing else decides a
 * status code.
 */

export type ErrorKind =
  | 'validation'
  | 'unauthorized'
  | 'permission_denied'
  | 'not_found'
  | 'method_not_allowed'
  | 'conflict'
  | 'payload_too_large'
  | 'uri_too_long'
  | 'unsupported_media_type'
  | 'headers_too_large'
  | 'rate_limited'
  | 'quota_exceeded'
  | 'unavailable'
  | 'internal';

/** gRPC status codes by name, as @connectrpc/connect's Code enum numbers them. */
export const GrpcCode = {
  INVALID_ARGUMENT: 3,
  NOT_FOUND: 5,
  ALREADY_EXISTS: 6,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  UNAUTHENTICATED: 16,
} as const;

interface KindSpec {
  http: number;
  grpc: number;
  /** The spec's short `error` string. The quota error carries its own (it holds the numbers). */
  error: string;
  /** Clients may retry (429, 5xx); activities treat the others as final. */
  retryable: boolean;
}

export const ERROR_TABLE: Record<ErrorKind, KindSpec> = {
  validation: { http: 400, grpc: GrpcCode.INVALID_ARGUMENT, error: 'validation error', retryable: false },
  unauthorized: { http: 401, grpc: GrpcCode.UNAUTHENTICATED, error: 'unauthorized', retryable: false },
  permission_denied: { http: 403, grpc: GrpcCode.PERMISSION_DENIED, error: 'permission denied', retryable: false },
  not_found: { http: 404, grpc: GrpcCode.NOT_FOUND, error: 'not found', retryable: false },
  // The HTTP errors below come from the protocol layer (a path without that method, a URL, body encoding or
  // header block the server does not take); gRPC reaches them only through its own framing.
  method_not_allowed: { http: 405, grpc: GrpcCode.UNIMPLEMENTED, error: 'method not allowed', retryable: false },
  // An Idempotency-Key whose first request is still being answered.
  conflict: { http: 409, grpc: GrpcCode.ALREADY_EXISTS, error: 'conflict', retryable: true },
  payload_too_large: { http: 413, grpc: GrpcCode.RESOURCE_EXHAUSTED, error: 'payload too large', retryable: false },
  uri_too_long: { http: 414, grpc: GrpcCode.INVALID_ARGUMENT, error: 'uri too long', retryable: false },
  unsupported_media_type: {
    http: 415,
    grpc: GrpcCode.INVALID_ARGUMENT,
    error: 'unsupported media type',
    retryable: false,
  },
  headers_too_large: {
    http: 431,
    grpc: GrpcCode.INVALID_ARGUMENT,
    error: 'request header fields too large',
    retryable: false,
  },
  rate_limited: { http: 429, grpc: GrpcCode.RESOURCE_EXHAUSTED, error: 'too many requests', retryable: true },
  quota_exceeded: { http: 429, grpc: GrpcCode.RESOURCE_EXHAUSTED, error: 'daily quota exceeded', retryable: true },
  unavailable: { http: 503, grpc: GrpcCode.UNAVAILABLE, error: 'service unavailable', retryable: true },
  internal: { http: 500, grpc: GrpcCode.INTERNAL, error: 'internal server error', retryable: true },
};

/** A PostgreSQL restart takes about a second; a Temporal one a few. */
export const UNAVAILABLE_RETRY_AFTER_SECONDS = 2;

/**
 * What a failure tells the caller besides its kind and message. Each adapter renders it in its own terms
 * (HTTP headers, gRPC metadata); nothing here names a header.
 */
export interface AppErrorOptions {
  /** Overrides the table's `error` string (the quota error puts its numbers there). */
  errorText?: string;
  /** When the caller may try again (a 429, 409 or 503). */
  retryAfterSeconds?: number;
  /** The caller's request rate, on a refusal by the rate limit. */
  rate?: RateDecision;
  /** The methods the requested path does answer, on a 405. */
  allowedMethods?: readonly string[];
  cause?: unknown;
}

export class AppError extends Error {
  override readonly name = 'AppError';
  readonly errorText: string | undefined;
  readonly retryAfterSeconds: number | undefined;
  readonly rate: RateDecision | undefined;
  readonly allowedMethods: readonly string[] | undefined;

  constructor(
    readonly kind: ErrorKind,
    message: string,
    options: AppErrorOptions = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.errorText = options.errorText;
    this.retryAfterSeconds = options.retryAfterSeconds;
    this.rate = options.rate;
    this.allowedMethods = options.allowedMethods;
  }

  get status(): number {
    return ERROR_TABLE[this.kind].http;
  }

  get grpcCode(): number {
    return ERROR_TABLE[this.kind].grpc;
  }

  /** The spec's error body. The daily quota error carries only `error`. */
  body(): { error: string; message?: string } {
    if (this.kind === 'quota_exceeded') return { error: this.errorText ?? ERROR_TABLE.quota_exceeded.error };
    return { error: this.errorText ?? ERROR_TABLE[this.kind].error, message: this.message };
  }
}

/**
 * Any thrown value as an AppError. A database or Temporal that cannot be reached is `unavailable`, to be
 * retried shortly (the request may well succeed in a moment); other unknown failures become `internal` with a
 * message that leaks nothing.
 */
export function toAppError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  const down = unavailableDependency(err);
  if (down) return unavailable(down, err);
  return new AppError('internal', 'An internal error occurred', { cause: err });
}

/** A 503 the caller should retry shortly: a dependency, or this instance, cannot answer now. */
export const unavailable = (message: string, cause?: unknown) =>
  new AppError('unavailable', message, { retryAfterSeconds: UNAVAILABLE_RETRY_AFTER_SECONDS, cause });
export const notFound = (what: string, id: string) => new AppError('not_found', `${what} ${id} not found`);
export const invalid = (message: string) => new AppError('validation', message);

/**
 * A dependency's own test for "cannot be reached right now", and the message that names it (the component
 * only: no address, no error text). The kernel knows no driver: each adapter registers its classifier when
 * its module loads (db/db-unavailable.ts, temporal/temporal-unavailable.ts), so whatever process can meet a
 * driver's error has its classifier.
 */
export interface UnavailableClassifier {
  matches(err: unknown): boolean;
  message: string;
}

const classifiers: UnavailableClassifier[] = [];

export function registerUnavailable(classifier: UnavailableClassifier): void {
  if (!classifiers.includes(classifier)) classifiers.push(classifier);
}

function unavailableDependency(err: unknown): string | undefined {
  return classifiers.find((c) => c.matches(err))?.message;
}
