import fs from 'node:fs/promises';
import path from 'node:path';
import type { JsonValue } from '@bufbuild/protobuf';
import { CsvError, parse } from 'csv-parse/sync';
import type { SendEmailRequest } from '../../src/gen/mail/v1/email_service_pb.js';
import { usageError } from './base-command.js';
import { attachmentFromFile, parseHeaders, parseTags, type MessageFields } from './message-input.js';
import { templateRefFromCells } from './template-input.js';

/** An email of the file: a message read from JSON, or the fields of a CSV row. */
export type BatchItem = SendEmailRequest | MessageFields;

/**
 * The emails of `batches send --file`:
 * - JSON: an array of send requests with the spec's field names (`{from, to, subject, text, ...}`), or
 *   `{"emails": [...]}`, the body of `POST /emails/batch`;
 * - CSV (by extension `.csv`, or when the file does not start with `[` or `{`): a header row, then one
 *   email per row. Columns: `from`, `to`, `cc`, `bcc`, `reply_to` (several addresses separated by `;`
 *   or `,`), `subject`, `html`, `text`, `html_file`, `text_file`, `attachments` (files separated by `;`;
 *   paths relative to the CSV file), `stream` and `topic` (empty: transactional, no topic), `header:<Name>`
 *   and `tag:<name>` (one column per header or tag, empty cells skipped); for a mail merge, `template` (id or
 *   alias, instead of subject and bodies), `template_version`, `locale`, `variables` (a JSON object) and
 *   `var:<name>` (one column per variable, dotted names nest: `var:order.number`; empty cells skipped).
 */
export async function readBatchFile(file: string): Promise<BatchItem[]> {
  let content: string;
  try {
    content = await fs.readFile(file, 'utf8');
  } catch (err) {
    throw usageError(`--file: cannot read ${file}: ${(err as Error).message}`);
  }
  const trimmed = content.replace(/^\uFEFF/, '').trimStart();
  const isJson =
    path.extname(file).toLowerCase() === '.json' ||
    (path.extname(file).toLowerCase() !== '.csv' && /^[[{]/.test(trimmed));
  const emails = isJson
    ? await parseJsonBatch(trimmed, file)
    : await parseCsvBatch(trimmed, path.dirname(path.resolve(file)), file);
  if (emails.length === 0) throw usageError(`--file: ${file} holds no emails`);
  return emails;
}

async function parseJsonBatch(content: string, file: string): Promise<BatchItem[]> {
  let doc: unknown;
  try {
    doc = JSON.parse(content);
  } catch (err) {
    throw usageError(`--file: ${file} is not valid JSON: ${(err as Error).message}`);
  }
  const items = Array.isArray(doc) ? doc : isObject(doc) && Array.isArray(doc.emails) ? doc.emails : undefined;
  if (!items) throw usageError(`--file: ${file} must hold a JSON array of emails or {"emails": [...]}`);
  const { sendEmailRequestFromJson } = await import('./rpc.js');
  return items.map((item: unknown, i: number) => {
    try {
      return sendEmailRequestFromJson(item as JsonValue);
    } catch (err) {
      throw usageError(
        `--file: emails[${i}]: ${(err as Error).message.replace(/^cannot decode message mail\.v1\.SendEmailRequest from JSON: /, '')}`,
      );
    }
  });
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

const LIST_COLUMNS = ['to', 'cc', 'bcc', 'reply_to'] as const;
const TEXT_COLUMNS = [
  'from',
  'subject',
  'html',
  'text',
  'html_file',
  'text_file',
  'attachments',
  'stream',
  'topic',
  'template',
  'template_version',
  'locale',
  'variables',
] as const;

async function parseCsvBatch(content: string, dir: string, file: string): Promise<BatchItem[]> {
  let rows: string[][];
  try {
    rows = parseCsv(content).filter((r) => r.some((c) => c.trim() !== ''));
  } catch (err) {
    throw usageError(`--file: ${file}: ${(err as Error).message}`);
  }
  const [header, ...body] = rows;
  if (!header) throw usageError(`--file: ${file} is empty`);
  const columns = header.map((h) => h.trim());
  for (const c of columns) {
    const known = (LIST_COLUMNS as readonly string[]).includes(c) || (TEXT_COLUMNS as readonly string[]).includes(c);
    if (!known && !/^(header|tag|var):.+/.test(c)) {
      throw usageError(
        `--file: ${file}: unknown column "${c}" (columns: ${[...TEXT_COLUMNS, ...LIST_COLUMNS].join(', ')}, header:<Name>, tag:<name>, var:<name>)`,
      );
    }
  }
  return Promise.all(
    body.map(async (row, i) => {
      const where = `${file} line ${i + 2}`;
      if (row.length > columns.length)
        throw usageError(`--file: ${where} has ${row.length} cells for ${columns.length} columns`);
      const cell = (name: string) => {
        const at = columns.indexOf(name);
        return at < 0 ? '' : (row[at] ?? '').trim();
      };
      const headers: string[] = [];
      const tags: string[] = [];
      const vars: string[] = [];
      columns.forEach((c, at) => {
        const v = (row[at] ?? '').trim();
        if (v === '') return;
        if (c.startsWith('header:')) headers.push(`${c.slice(7)}: ${v}`);
        if (c.startsWith('tag:')) tags.push(`${c.slice(4)}=${v}`);
        if (c.startsWith('var:')) vars.push(`${c.slice(4)}=${v}`);
      });
      const template = templateRefFromCells(
        {
          template: cell('template'),
          version: cell('template_version'),
          locale: cell('locale'),
          variables: cell('variables'),
          vars,
        },
        `--file: ${where}`,
      );
      const readCell = async (name: string) => {
        const f = cell(name);
        if (f === '') return undefined;
        try {
          return await fs.readFile(path.resolve(dir, f), 'utf8');
        } catch (err) {
          throw usageError(`--file: ${where}: ${name}: cannot read ${f}: ${(err as Error).message}`);
        }
      };
      return {
        from: cell('from'),
        to: splitAddresses(cell('to')),
        cc: splitAddresses(cell('cc')),
        bcc: splitAddresses(cell('bcc')),
        replyTo: splitAddresses(cell('reply_to')),
        subject: cell('subject'),
        html: (await readCell('html_file')) ?? cell('html'),
        text: (await readCell('text_file')) ?? cell('text'),
        attachments: await Promise.all(
          cell('attachments')
            .split(';')
            .map((s) => s.trim())
            .filter((s) => s !== '')
            .map((s) => attachmentFromFile(s, dir)),
        ),
        headers: parseHeaders(headers, `--file: ${where}: header column`),
        tags: parseTags(tags, `--file: ${where}: tag column`),
        stream: cell('stream'),
        topic: cell('topic'),
        ...(template !== undefined ? { template } : {}),
      } satisfies MessageFields;
    }),
  );
}

/** Addresses separated by `,` or `;`, except inside quotes or angle brackets (`"Doe, Jane" <j@x.org>`). */
export function splitAddresses(cell: string): string[] {
  const out: string[] = [];
  let current = '';
  let quoted = false;
  let angle = false;
  for (const ch of cell) {
    if (ch === '"') quoted = !quoted;
    else if (ch === '<' && !quoted) angle = true;
    else if (ch === '>' && !quoted) angle = false;
    if ((ch === ',' || ch === ';') && !quoted && !angle) {
      out.push(current);
      current = '';
    } else {
      current += ch;
    }
  }
  out.push(current);
  return out.map((s) => s.trim()).filter((s) => s !== '');
}

/**
 * RFC 4180 CSV: `,` separated, `"` quoted (with `""` for a quote), quoted cells may span lines. Rows may
 * differ in length (the caller names the row with too many cells), lines may end in CRLF, LF or CR, and a
 * quote inside an unquoted cell is text, as spreadsheets write them.
 */
export function parseCsv(text: string): string[][] {
  try {
    return parse(text, { relax_column_count: true, relax_quotes: true, record_delimiter: ['\r\n', '\n', '\r'] });
  } catch (err) {
    if (err instanceof CsvError && err.code === 'CSV_QUOTE_NOT_CLOSED')
      throw new Error('a quoted cell is not closed', { cause: err });
    throw err;
  }
}
