import postgres from 'postgres';
// The driver's unreachable-server errors answer 503 wherever this client is used (errors.ts).
import './db-unavailable.js';

/** The one connection pool of a process. Repositories take it as a dependency; nothing builds its own. */
export type Sql = postgres.Sql<Record<string, never>>;

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

export function createSql(url: string, options: PoolOptions = {}): Sql {
  return postgres(url, {
    max: options.max ?? 20,
    idle_timeout: 60,
    connect_timeout: 10,
    backoff: (retries: number) => Math.min(RECONNECT_BACKOFF_FIRST_SECONDS * 2 ** retries, RECONNECT_BACKOFF_MAX_SECONDS),
    // Column names stay snake_case; repositories map rows to domain objects explicitly.
    transform: { undefined: null },
    onnotice: options.onnotice ?? (() => {}),
    connection: { application_name: 'mailer' },
  }) as unknown as Sql;
}
