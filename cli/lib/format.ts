// Human output: aligned tables and `label  value` blocks, plain text (no colours), so it pipes well.

/** Columns padded to their widest cell; the last column is not padded. */
export function table(headers: string[], rows: string[][]): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  return [line(headers), ...rows.map(line), ...(rows.length === 0 ? ['(none)'] : [])].join('\n');
}

/** `label  value` lines, labels aligned; entries whose value is undefined are left out. */
export function fields(entries: [string, string | number | boolean | undefined][]): string {
  const shown = entries.filter((e): e is [string, string | number | boolean] => e[1] !== undefined);
  const width = Math.max(0, ...shown.map(([label]) => label.length));
  return shown.map(([label, value]) => `${label.padEnd(width)}  ${String(value)}`.trimEnd()).join('\n');
}

type Shown = string | number | boolean | undefined;

/**
 * `fields` of a record: a key shows the record's value under its snake_case name (the API's), a
 * `[label, value]` pair shows as given, in the order listed.
 */
export function fieldsOf<T extends object>(record: T, spec: ((keyof T & string) | [string, Shown])[]): string {
  return fields(
    spec.map((s) =>
      typeof s === 'string' ? [s.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`), record[s] as Shown] : s,
    ),
  );
}

export const list = (values: readonly string[]): string => values.join(', ');

export const yesNo = (b: boolean): string => (b ? 'yes' : 'no');

/** A rate from 0 to 1 as a percentage. */
export const percent = (rate: number): string => `${(rate * 100).toFixed(2)}%`;

/** `key=value, ...` of a string map. */
export const pairs = (map: Record<string, string>): string =>
  Object.entries(map)
    .map(([k, v]) => `${k}=${v}`)
    .join(', ');

/** Where a paged list stands: `page 2 of 5 (93 in all)`. */
export function pageLine(page: number, size: number, total: number): string {
  const pages = Math.max(1, Math.ceil(total / size));
  return `page ${page} of ${pages} (${total} in all)`;
}

/** Shortens long text for a table cell. */
export const clip = (s: string, max = 48): string => (s.length > max ? `${s.slice(0, max - 1)}…` : s);
