import type { Sql } from '../sql.js';

/** Service-wide values every process must share (the tracking link key), created once by whoever asks first. */
export function createSettingsRepo(sql: Sql) {
  return {
    /** The stored value of `name`, storing `initial` first if there is none (a race keeps the first one). */
    async getOrCreate(name: string, initial: string): Promise<string> {
      await sql`insert into settings (name, value) values (${name}, ${initial}) on conflict (name) do nothing`;
      const [row] = await sql<{ value: string }[]>`select value from settings where name = ${name}`;
      return row!.value;
    },
  };
}
export type SettingsRepo = ReturnType<typeof createSettingsRepo>;
