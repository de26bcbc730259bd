import { registerUnavailable } from '../errors.js';

/**
 * Whether an error means the Temporal frontend cannot be reached right now: a gRPC UNAVAILABLE, or a
 * DEADLINE_EXCEEDED of the bounded calls the request path makes (workflow starts, the readiness probe).
 * The client wraps the gRPC error in a ServiceError, so `cause` chains are followed. Matched by shape (a
 * numeric gRPC `code` with its `details`), so that this module needs no SDK import.
 */
const GRPC_DEADLINE_EXCEEDED = 4;
const GRPC_UNAVAILABLE = 14;
const MAX_DEPTH = 5;

export function isTemporalUnavailable(err: unknown, depth = 0): boolean {
  if (typeof err !== 'object' || err === null || depth > MAX_DEPTH) return false;
  const e = err as { code?: unknown; details?: unknown; cause?: unknown; name?: unknown };
  if (
    typeof e.code === 'number' &&
    typeof e.details === 'string' &&
    (e.code === GRPC_UNAVAILABLE || e.code === GRPC_DEADLINE_EXCEEDED)
  )
    return true;
  // The worker's native connection reports a server it cannot reach this way.
  if (e.name === 'TransportError') return true;
  return isTemporalUnavailable(e.cause, depth + 1);
}

registerUnavailable({
  matches: (err) => isTemporalUnavailable(err),
  message: 'The workflow engine (Temporal) is unavailable; retry shortly',
});
