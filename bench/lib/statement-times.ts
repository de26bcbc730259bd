import postgres from 'postgres';

/**
 * BENCH_PGSS=1: where PostgreSQL's time goes over the throughput and inbound parts, from `pg_stat_statements` (`track = all`,
 * so statements run inside triggers and functions count too, beside the statement that ran them). Off by
 * default: the extension costs every statement a little. docs/benchmark.md's per-statement tables come from it.
 *
 * PostgreSQL 18 files every foreign-key check under one entry, whose text names whichever table it saw first.
 */
export const STATEMENT_TIMES = process.env.BENCH_PGSS === '1';
export const STATEMENT_TIMES_SETTINGS = ['shared_preload_libraries=pg_stat_statements', 'pg_stat_statements.track=all'];
const KEPT = 40;

export interface StatementTimes {
  /** Emails in the database at the end: the per-email figures divide by it. */
  emails: number;
  /** The statements that took the most time, most first; `nested`: run inside another statement. */
  statements: { query: string; calls: number; rows: number; ms: number; nested: boolean; walRecords: number }[];
}

/** Resets the counters now; the function it answers reads them and names the top statements. */
export async function startStatementTimes(databaseUrl: string): Promise<() => Promise<StatementTimes>> {
  const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} });
  await sql`create extension if not exists pg_stat_statements`;
  await sql`select pg_stat_statements_reset()`;
  return async () => {
    try {
      const statements = await sql<StatementTimes['statements']>`
        select left(regexp_replace(query, '[[:space:]]+', ' ', 'g'), 200) as query, calls::float8 as calls,
          rows::float8 as rows, round(total_exec_time::numeric, 1)::float8 as ms, not toplevel as nested,
          wal_records::float8 as "walRecords"
        from pg_stat_statements order by total_exec_time desc limit ${KEPT}`;
      const [row] = await sql<{ n: number }[]>`select count(*)::float8 as n from emails`;
      return { emails: row?.n ?? 0, statements };
    } finally {
      await sql.end();
    }
  };
}

/** The top statements as log lines: µs of server time and calls per email (or per `unit`, `count` of them). */
export function statementLines(t: StatementTimes, top = 12, unit = 'email', count = t.emails): string[] {
  const per = (x: number) => (count > 0 ? x / count : 0);
  return t.statements
    .slice(0, top)
    .map(
      (s) =>
        `${(per(s.ms) * 1000).toFixed(0).padStart(5)} µs/${unit} ${per(s.calls).toFixed(2).padStart(6)} calls/${unit} ` +
        `${per(s.walRecords).toFixed(1).padStart(5)} WAL/${unit}${s.nested ? ' (nested)' : ''}  ${s.query.slice(0, 110)}`,
    );
}
