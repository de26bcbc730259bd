import type { Sql } from '../sql.js';
import { countedTotal, type CountedList } from './list-counts.js';

/**
 * Reads of a table whose rows belong to accounts (batch jobs, scheduled emails): one row by id, and a page
 * newest first (ids are time-ordered) with how many match in all, perhaps of one status. Another
 * account's row is as absent as a missing one. `table` and `columns` are the repositories' own
 * constants, never input; `list` names the table's counters (list-counts.ts), which give the total.
 */
export function ownedRows<Raw extends object, Row, Status extends string>(
  sql: Sql,
  table: string,
  list: CountedList,
  columns: string,
  toRow: (raw: Raw) => Row,
) {
  const select = () => sql.unsafe(`select ${columns} from ${table}`);
  return {
    async get(accountId: string, id: string): Promise<Row | undefined> {
      const [row] = await sql<Raw[]>`${select()} where id = ${id} and account_id = ${accountId}`;
      return row && toRow(row);
    },

    /** The page's ids by an index-only scan (a deep offset skips index entries), then those rows alone. */
    async list(
      accountId: string,
      status: Status | undefined,
      limit: number,
      offset: number,
    ): Promise<{ rows: Row[]; total: number }> {
      const where = sql`account_id = ${accountId} ${status ? sql`and status = ${status}` : sql``}`;
      const [rows, total] = await Promise.all([
        sql<
          Raw[]
        >`${select()} join (select id from ${sql.unsafe(table)} where ${where} order by id desc limit ${limit} offset ${offset}) page using (id)
          order by id desc`,
        countedTotal(sql, accountId, list, status ? { status } : {}),
      ]);
      return { rows: rows.map(toRow), total };
    },
  };
}
