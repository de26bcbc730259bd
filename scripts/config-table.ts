import { describeConfig } from '../src/config.js';

/** The README's configuration table lives between these markers, so that it can be regenerated in place. */
export const CONFIG_TABLE_START = '<!-- config:start (npm run docs:config writes this table from src/config.ts) -->';
export const CONFIG_TABLE_END = '<!-- config:end -->';

const cell = (text: string) => text.replaceAll('|', '\\|').replaceAll('\n', ' ');

/** A value as code; a default said in words (it has a space) as it is written. */
const defaultCell = (d: string | undefined) =>
  d === undefined ? 'unset' : d.includes(' ') ? cell(d) : `\`${cell(d)}\``;

/** The Markdown table of every setting config.ts declares, in its order. */
export function renderConfigTable(): string {
  const rows = describeConfig().map((s) => `| \`${s.env}\` | ${cell(s.description)} | ${defaultCell(s.default)} |`);
  return ['| variable | meaning | default |', '|---|---|---|', ...rows].join('\n');
}

/** The table as it stands between the markers of `markdown`, or undefined when the markers are missing. */
export function readConfigTable(markdown: string): string | undefined {
  const start = markdown.indexOf(CONFIG_TABLE_START);
  const end = markdown.indexOf(CONFIG_TABLE_END);
  if (start < 0 || end < start) return undefined;
  return markdown.slice(start + CONFIG_TABLE_START.length, end).trim();
}

/** `markdown` with the generated table between its markers. */
export function withConfigTable(markdown: string): string {
  const start = markdown.indexOf(CONFIG_TABLE_START);
  const end = markdown.indexOf(CONFIG_TABLE_END);
  if (start < 0 || end < start)
    throw new Error(`the markers ${CONFIG_TABLE_START} and ${CONFIG_TABLE_END} are missing`);
  return `${markdown.slice(0, start + CONFIG_TABLE_START.length)}\n${renderConfigTable()}\n${markdown.slice(end)}`;
}
