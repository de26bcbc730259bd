import type { Sql } from '../sql.js';

/**
 * Reads of a table whose rows belong to accounts (batch jobs, scheduled emails): one row by id, and a page
 * newest first (ids are time-ordered) with how many match in all, perhaps of one status. Another
 * account's row is as absent as a missing one. `table` and `columns` are the repositories' own
 * constants, never input.
 */
export function ownedRows<Raw extends object, Row, Status extends string>(sql: Sql, table: string, columns: string, toRow: (raw: Raw) => Row) {
  const select = () => sql.unsafe(`select ${columns} from ${table}`);
  return {
    async get(accountId: string, id: string): Promise<Row | undefined> {
      const [row] = await sql<Raw[]>`${select()} where id = ${id} and account_id = ${accountId}`;
      return row && toRow(row);
    },

    async list(accountId: string, status: Status | undefined, limit: number, offset: number): Promise<{ rows: Row[]; total: number }> {
      const where = sql`account_id = ${accountId} ${status ? sql`and status = ${status}` : sql``}`;
      const [rows, [count]] = await Promise.all([
        sql<Raw[]>`${select()} where ${where} order by id desc limit ${limit} offset ${offset}`,
        sql<{ n: number }[]>`select count(*)::int as n from ${sql.unsafe(table)} where ${where}`,
      ]);
      return { rows: rows.map(toRow), total: count!.n };
    },
  };
}
