import { registerUnavailable } from '../errors.js';

/**
 * Whether an error means PostgreSQL cannot be reached right now (down, restarting, refusing connections),
 * as opposed to a fault of the statement or of the data. Such a failure says nothing about the request, so
 * callers answer it as `unavailable` (503, Retry-After) and processes starting up wait for the database.
 * Errors are matched by their codes only (the `postgres` library's, Node's socket errors, PostgreSQL's
 * SQLSTATE), following `cause` and AggregateError chains, as a refused connect may arrive wrapped.
 */

/** The `postgres` library's codes for a connection that could not be made or was lost. */
const CLIENT_CODES = new Set(['CONNECTION_CLOSED', 'CONNECTION_DESTROYED', 'CONNECTION_ENDED', 'CONNECT_TIMEOUT']);

/** Socket-level failures to reach the server (DNS included: a database host not resolvable yet at start). */
const SOCKET_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EHOSTDOWN',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/**
 * SQLSTATEs of a server going away or not taking connections: class 08 (connection exception),
 * admin_shutdown, crash_shutdown, cannot_connect_now (starting up, shutting down, in recovery), and
 * too_many_connections (it is up but takes no one else for now).
 */
const SQLSTATES = new Set(['57P01', '57P02', '57P03', '53300']);
const SQLSTATE_CLASSES = ['08'];

/** How deep to follow causes; real chains are one or two links. */
const MAX_DEPTH = 5;

export function isDatabaseUnavailable(err: unknown, depth = 0): boolean {
  if (typeof err !== 'object' || err === null || depth > MAX_DEPTH) return false;
  const e = err as { code?: unknown; errors?: unknown; cause?: unknown };
  if (typeof e.code === 'string') {
    if (CLIENT_CODES.has(e.code) || SOCKET_CODES.has(e.code) || SQLSTATES.has(e.code)) return true;
    if (/^[0-9A-Z]{5}$/.test(e.code) && SQLSTATE_CLASSES.some((c) => (e.code as string).startsWith(c))) return true;
  }
  if (Array.isArray(e.errors) && e.errors.some((x) => isDatabaseUnavailable(x, depth + 1))) return true;
  return isDatabaseUnavailable(e.cause, depth + 1);
}

/**
 * Failures to reach the server at all: no statement was sent on a connection that was never made, so
 * nothing of it can have committed. Every other unavailable failure may have come after the statement
 * reached the server, even after its commit (the answer lost with the connection): its outcome is unknown.
 */
const NEVER_CONNECTED_CODES = new Set([
  'ECONNREFUSED',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EHOSTDOWN',
  'ENOTFOUND',
  'EAI_AGAIN',
  'CONNECT_TIMEOUT',
  // cannot_connect_now and too_many_connections answer a connection's startup, before any statement.
  '57P03',
  '53300',
  '08001',
  '08004',
]);

function neverConnected(err: unknown, depth = 0): boolean {
  if (typeof err !== 'object' || err === null || depth > MAX_DEPTH) return false;
  const e = err as { code?: unknown; errors?: unknown; cause?: unknown };
  if (typeof e.code === 'string' && NEVER_CONNECTED_CODES.has(e.code)) return true;
  if (Array.isArray(e.errors) && e.errors.length > 0 && e.errors.every((x) => neverConnected(x, depth + 1)))
    return true;
  return neverConnected(e.cause, depth + 1);
}

/**
 * Whether a write that failed with `err` may nonetheless have committed: the database went away while
 * the statement was in flight (the connection closed or reset, the server shut down or crashed), so the
 * commit may have happened and only its answer was lost. False for a statement the server refused, and
 * for a connection that was never made.
 */
export function isCommitOutcomeUnknown(err: unknown): boolean {
  return isDatabaseUnavailable(err) && !neverConnected(err);
}

registerUnavailable({
  matches: (err) => isDatabaseUnavailable(err),
  message: 'The database is unavailable; retry shortly',
});
