import type { Sql } from './sql.js';

/**
 * The database as every migration leaves it, written as SQL a reader can follow: tables with their columns,
 * constraints, indexes, functions and triggers, each in name order so that two snapshots differ only where the
 * schema does. The migrations are the history (each one replaced what came before, a trigger function often
 * redefined three times); `src/db/schema.sql` is the present, generated from a migrated database by
 * `test/integration/schema-snapshot.test.ts`, which fails when the file is stale.
 */
export async function schemaSnapshot(sql: Sql): Promise<string> {
  const parts: string[] = [
    '-- The schema after all migrations (src/db/migrations). Generated: do not edit.',
    '-- UPDATE_SCHEMA=1 npx vitest run test/integration/schema-snapshot.test.ts writes it anew.',
    '',
  ];

  const tables = await sql<{ name: string; comment: string | null; options: string[] | null }[]>`
    select c.relname as name, obj_description(c.oid, 'pg_class') as comment, c.reloptions as options
    from pg_class c join pg_namespace n on n.oid = c.relnamespace
    where n.nspname = 'public' and c.relkind in ('r', 'p') order by c.relname`;
  for (const { name, comment, options } of tables) {
    const columns = await sql<{ name: string; type: string; not_null: boolean; def: string | null }[]>`
      select a.attname as name, format_type(a.atttypid, a.atttypmod) as type, a.attnotnull as not_null,
        pg_get_expr(d.adbin, d.adrelid) as def
      from pg_attribute a left join pg_attrdef d on d.adrelid = a.attrelid and d.adnum = a.attnum
      where a.attrelid = ${`public.${name}`}::regclass and a.attnum > 0 and not a.attisdropped order by a.attnum`;
    // NOT NULL constraints (PostgreSQL 18 lists them too) are written on their columns.
    const constraints = await sql<{ name: string; def: string }[]>`
      select conname as name, pg_get_constraintdef(oid) as def from pg_constraint
      where conrelid = ${`public.${name}`}::regclass and contype <> 'n' order by contype, conname`;
    const lines = [
      ...columns.map(
        (c) => `  ${c.name} ${c.type}${c.not_null ? ' NOT NULL' : ''}${c.def === null ? '' : ` DEFAULT ${c.def}`}`,
      ),
      ...constraints.map((c) => `  CONSTRAINT ${c.name} ${c.def}`),
    ];
    // Storage parameters (a fillfactor) are part of what a migration decides.
    const storage = options ? ` WITH (${options.join(', ')})` : '';
    parts.push(...commentLines(comment), `CREATE TABLE ${name} (\n${lines.join(',\n')}\n)${storage};`, '');
  }

  const indexes = await sql<{ def: string }[]>`
    select pg_get_indexdef(i.indexrelid) as def from pg_index i
    join pg_class t on t.oid = i.indrelid join pg_namespace n on n.oid = t.relnamespace join pg_class x on x.oid = i.indexrelid
    where n.nspname = 'public' and not exists (select 1 from pg_constraint c where c.conindid = i.indexrelid)
    order by t.relname, x.relname`;
  parts.push(...indexes.map((i) => `${i.def};`), '');

  const functions = await sql<{ def: string; comment: string | null }[]>`
    select pg_get_functiondef(p.oid) as def, obj_description(p.oid, 'pg_proc') as comment from pg_proc p join pg_namespace n on n.oid = p.pronamespace
    where n.nspname = 'public' order by p.proname, pg_get_function_identity_arguments(p.oid)`;
  parts.push(...functions.flatMap((f) => [...commentLines(f.comment), `${f.def.trimEnd()};\n`]));

  const triggers = await sql<{ def: string }[]>`
    select pg_get_triggerdef(t.oid) as def from pg_trigger t
    join pg_class c on c.oid = t.tgrelid join pg_namespace n on n.oid = c.relnamespace
    where n.nspname = 'public' and not t.tgisinternal order by c.relname, t.tgname`;
  parts.push(...triggers.map((t) => `${t.def};`), '');
  return `${parts.join('\n').trimEnd()}\n`;
}

/** An object's COMMENT (the why of it, set by a migration) as `--` lines wrapped at 110 columns. */
function commentLines(comment: string | null): string[] {
  if (!comment) return [];
  const lines: string[] = [];
  let line = '--';
  for (const word of comment.split(/\s+/)) {
    if (line.length + word.length + 1 > 110 && line !== '--') {
      lines.push(line);
      line = '--';
    }
    line += ` ${word}`;
  }
  return [...lines, line];
}
