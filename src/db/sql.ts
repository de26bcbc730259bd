import postgres from 'postgres';
import type { JsonValue } from '../domain/json.js';
// The driver's unreachable-server errors answer 503 wherever this client is used (errors.ts).
import './db-unavailable.js';

/** The one connection pool of a process. Repositories take it as a dependency; nothing builds its own. */
export type Sql = postgres.Sql<Record<string, never>>;

/** The handle inside `sql.begin(...)`: statements, but no `begin` or `end` of its own. The one spelling of a transaction. */
export type Tx = postgres.TransactionSql<Record<string, never>>;

/**
 * Data that JSON.stringify writes as it is, checked field by field. The driver's own `JSONValue` asks every
 * object for an index signature, which an interface (BouncedRecipient, Mailboxes, ...) never has.
 */
export type Json<T> = T extends JsonValue | undefined | Date
  ? T
  : T extends bigint | symbol | ((...args: never[]) => unknown)
    ? never
    : { [K in keyof T]: Json<T[K]> };

const JSONB_OID = 3802;

/**
 * Whether `err` is a statement's failure with SQLSTATE `code`: one of PostgreSQL's own, or one the schema's
 * functions raise (`MQ429` quota refused, `MQ401` a claimed key changed).
 */
export const hasSqlState = (err: unknown, code: string): boolean =>
  typeof err === 'object' && err !== null && (err as { code?: unknown }).code === code;

/**
 * A value as one jsonb parameter (rows for `jsonb_to_recordset`, say): the same parameter the driver's `json()`
 * builds (postgres/src/index.js), with the value checked by `Json` instead of the driver's `JSONValue`.
 */
export const jsonb = <T>(sql: Sql | Tx, value: T & Json<T>): postgres.Parameter<T> => sql.typed(value, JSONB_OID);

export interface PoolOptions {
  max?: number;
  /** Logged once per notice instead of printed to stdout. */
  onnotice?: (notice: postgres.Notice) => void;
}

/**
 * The longest wait, in seconds, before reconnecting after a failed connect. The library's default grows to
 * 20 s, and a query waits that out before it even tries: during and after a database restart requests hung
 * for many seconds before their 503, and came back that late. Refused connects cost nothing to retry.
 */
const RECONNECT_BACKOFF_MAX_SECONDS = 0.5;
const RECONNECT_BACKOFF_FIRST_SECONDS = 0.05;

/**
 * How long, in seconds, a new connection may take to be ready (TCP, authentication, the first ReadyForQuery).
 * A server that takes the connect but does not answer (stopped, overloaded, its accept queue full) held a request
 * this long before its 503: at the library's 30 s, or the 10 s used before, a client gave up first. A connection
 * to a healthy server is ready in milliseconds, and pooled connections are made rarely. `?connect_timeout=N` in
 * the URL (libpq's parameter) sets another, for a database far away.
 */
export const DEFAULT_CONNECT_TIMEOUT_SECONDS = 2;

function urlSetsConnectTimeout(url: string): boolean {
  try {
    return new URL(url).searchParams.has('connect_timeout');
  } catch {
    return false; // not a URL the WHATWG parser reads (several hosts, say): the driver parses it and the default holds
  }
}

export function createSql(url: string, options: PoolOptions = {}): Sql {
  return postgres(url, {
    max: options.max ?? 20,
    idle_timeout: 60,
    // The driver prefers an option given here to the URL's, so the default is given only when the URL sets none.
    ...(urlSetsConnectTimeout(url) ? {} : { connect_timeout: DEFAULT_CONNECT_TIMEOUT_SECONDS }),
    backoff: (retries: number) =>
      Math.min(RECONNECT_BACKOFF_FIRST_SECONDS * 2 ** retries, RECONNECT_BACKOFF_MAX_SECONDS),
    // Column names stay snake_case; repositories map rows to domain objects explicitly.
    transform: { undefined: null },
    onnotice: options.onnotice ?? (() => {}),
    connection: { application_name: 'mailer' },
  });
}
