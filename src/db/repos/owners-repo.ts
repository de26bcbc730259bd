import type { Sql } from '../sql.js';

/** Which account a record belongs to, for the management API, which addresses records by id alone. */
export function createOwnersRepo(sql: Sql) {
  const owner = async (rows: Promise<{ account_id: string }[]>) => (await rows)[0]?.account_id;
  return {
    ofEmail: (id: string) => owner(sql<{ account_id: string }[]>`select account_id from emails where id = ${id}`),
    ofScheduled: (id: string) =>
      owner(sql<{ account_id: string }[]>`select account_id from scheduled_emails where id = ${id}`),
  };
}
export type OwnersRepo = ReturnType<typeof createOwnersRepo>;
