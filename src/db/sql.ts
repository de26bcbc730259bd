import postgres from 'postgres';

/** The one connection pool of a process. Repositories take it as a dependency; nothing builds its own. */
export type Sql = postgres.Sql<Record<string, never>>;

export interface PoolOptions {
  max?: number;
  /** Logged once per notice instead of printed to stdout. */
  onnotice?: (notice: postgres.Notice) => void;
}

export function createSql(url: string, options: PoolOptions = {}): Sql {
  return postgres(url, {
    max: options.max ?? 20,
    idle_timeout: 60,
    connect_timeout: 10,
    // Column names stay snake_case; repositories map rows to domain objects explicitly.
    transform: { undefined: null },
    onnotice: options.onnotice ?? (() => {}),
    connection: { application_name: 'mailer' },
  }) as unknown as Sql;
}

/** True for PostgreSQL's unique_violation. */
export function isUniqueViolation(err: unknown, constraint?: string): boolean {
  const e = err as { code?: string; constraint_name?: string };
  return e?.code === '23505' && (constraint === undefined || e.constraint_name === constraint);
}
