import postgres from 'postgres';

/** Runs `run` on a connection of its own to `databaseUrl` (a deployment's database, seen from the test), then closes it. */
export async function withDb<T>(databaseUrl: string, run: (sql: postgres.Sql) => Promise<T>): Promise<T> {
  const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} });
  try {
    return await run(sql);
  } finally {
    await sql.end();
  }
}
