import { sealedContext, type SecretBox } from '../../domain/sealed-values.js';
import type { Sql } from '../sql.js';

/** Service-wide values every process must share (the tracking link key), created once by whoever asks first. */
export function createSettingsRepo(sql: Sql, box: SecretBox) {
  /** The stored value of `name`, storing `initial` first if there is none (a race keeps the first one). */
  async function getOrCreate(name: string, initial: string): Promise<string> {
    await sql`insert into settings (name, value) values (${name}, ${initial}) on conflict (name) do nothing`;
    const [row] = await sql<{ value: string }[]>`select value from settings where name = ${name}`;
    return row!.value;
  }

  return {
    getOrCreate,

    /**
     * A secret setting (the tracking key): stored sealed for its name, made by `initial` if there is none.
     * One stored in clear before secrets were sealed is sealed now (if still as read: a race seals it once)
     * and keeps its value, so the tokens already out stay valid.
     */
    async getOrCreateSecret(name: string, initial: () => string): Promise<string> {
      const context = sealedContext.setting(name);
      const stored = await getOrCreate(name, box.seal(initial(), context));
      if (box.isBound(stored)) return box.open(stored, context);
      await sql`update settings set value = ${box.seal(stored, context)} where name = ${name} and value = ${stored}`;
      return stored;
    },
  };
}
export type SettingsRepo = ReturnType<typeof createSettingsRepo>;
