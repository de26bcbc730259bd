import { CsvError, parse } from 'csv-parse/sync';
import type { NewSuppressionEntry, SuppressionRow } from '../domain/entities/suppressions.js';
import { suppressionAddress, suppressionRule } from '../domain/suppression-rules.js';
import { AppError, invalid } from '../errors.js';

/**
 * The suppression list as CSV (RFC 4180), both ways: an import's `email[,scope[,topic]]` read by csv-parse (the
 * package the CLI reads batch files with), each row checked as POST /suppressions checks its body and refused
 * alone, by its line in the file; an export's `email,reason,scope,topic,created_at` written a row at a time.
 *
 * Spreadsheet formulas: a cell that starts with `=`, `+`, `-`, `@`, a tab or a carriage return is read by Excel,
 * LibreOffice and Google Sheets as a formula (CSV injection), and `-x@example.com` or `=cmd@example.com` are
 * valid addresses (atext). An export therefore writes such a cell with a `'` before it (OWASP's advice), and a
 * cell that starts with `'` with one more, so the escape is itself escaped; an import takes one leading `'` off
 * a cell whose next character is one of those or `'`. An export imports back to exactly the same addresses.
 */

export const IMPORT_MAX_ROWS = 100_000;
export const EXPORT_HEADER = ['email', 'reason', 'scope', 'topic', 'created_at'] as const;
const HEADERS = ['email', 'scope', 'topic'];

/** Characters a spreadsheet reads a formula from at the start of a cell, and the escape itself. */
const FORMULA_START = /^[=+\-@\t\r']/;
/** A cell that must be quoted: it holds a quote, a comma or a line break. */
const NEEDS_QUOTES = /[",\r\n]/;

/** One cell of an export: formula starts defused, quoted when needed. */
export function csvCell(value: string): string {
  const cell = FORMULA_START.test(value) ? `'${value}` : value;
  return NEEDS_QUOTES.test(cell) ? `"${cell.replaceAll('"', '""')}"` : cell;
}

/** An imported cell with the export's defusing taken off (see above). */
export function undefused(cell: string): string {
  return cell.startsWith("'") && FORMULA_START.test(cell.slice(1)) ? cell.slice(1) : cell;
}

/** One line of an export, CRLF-terminated as RFC 4180 writes it. */
export function exportLine(s: SuppressionRow): string {
  return `${[s.address, s.reason, s.scope, s.topic, s.createdAt.toISOString()].map(csvCell).join(',')}\r\n`;
}

export const exportHeaderLine = `${EXPORT_HEADER.join(',')}\r\n`;

export interface RowError {
  line: number;
  message: string;
}

export interface ReadImport {
  entries: NewSuppressionEntry[];
  errors: RowError[];
}

/** The text of a csv-parse error without its own position (the line is reported beside it). */
function describeCsvError(err: CsvError): string {
  switch (err.code) {
    case 'CSV_QUOTE_NOT_CLOSED':
      return 'a quoted field is never closed: everything from its opening quote to the end of the file was read as one field';
    default:
      return err.message.replace(/ at line \d+/, '');
  }
}

/**
 * The rows of an import: the suppressions to add, and the rows refused with their line (the header is line
 * 1; a line break inside a quoted field starts a new line). A header that is not `email[,scope[,topic]]`, or
 * more than IMPORT_MAX_ROWS rows, refuses the whole file.
 */
export function readImport(text: string): ReadImport {
  const errors: RowError[] = [];
  // The line each record ends on, beside the records (csv-parse's `info` option would type them apart).
  const ends: number[] = [];
  let lastEnd = 0;
  // Records read or skipped so far, header included: the parse stops at the first one past the limit, so a body
  // of millions of one-character rows (the body limit allows some 24 million) is refused before it is held.
  let seen = 0;
  const count = () => {
    if (++seen > IMPORT_MAX_ROWS + 1)
      throw new AppError(
        'payload_too_large',
        `An import takes at most ${IMPORT_MAX_ROWS} rows; this file has more: split it`,
      );
  };
  let records: string[][];
  try {
    records = parse(text, {
      bom: true,
      // A quote inside an unquoted field, or text after a quoted one (`"a@example.com" ` with a space), is read
      // as written, and the row is then judged as any other: strictly, csv-parse reports it and stays inside a
      // quote, so every row after it was swallowed as one unclosed field.
      relax_quotes: true,
      relax_column_count: true,
      skip_empty_lines: true,
      // A file may end its lines either way, or mix them (one edited on two systems).
      record_delimiter: ['\r\n', '\n', '\r'],
      skip_records_with_error: true,
      on_skip: (err) => {
        if (!err) return undefined;
        count();
        // An unclosed quote is found at the end of the file: it opened on the line after the last record read.
        const line = err.code === 'CSV_QUOTE_NOT_CLOSED' ? lastEnd + 1 : Number(err.lines);
        errors.push({ line, message: describeCsvError(err) });
        lastEnd = Math.max(lastEnd, Number(err.lines));
        return undefined;
      },
      on_record: (record: string[], context) => {
        count();
        ends.push(context.lines);
        lastEnd = context.lines;
        return record;
      },
    });
  } catch (err) {
    if (err instanceof CsvError) throw invalid(`The CSV cannot be read: ${err.message}`);
    throw err;
  }
  const header = records[0];
  const columns = header?.map((c) => c.trim().toLowerCase()) ?? [];
  if (header === undefined || ends[0] !== 1 || !columns.every((c, i) => c === HEADERS[i]))
    throw invalid(
      `line 1 must be the header email, email,scope or email,scope,topic; got ${header === undefined || ends[0] !== 1 ? 'nothing' : JSON.stringify(columns.join(',').slice(0, 80))}`,
    );
  const entries: NewSuppressionEntry[] = [];
  for (let i = 1; i < records.length; i++) {
    const record = records[i]!;
    // The line the record starts on: where it ends, less the line breaks inside its quoted fields.
    const line = ends[i]! - record.reduce((n, c) => n + (c.match(/\r\n|\r|\n/g)?.length ?? 0), 0);
    if (record.length > columns.length) {
      errors.push({ line, message: `has ${record.length} fields; the header has ${columns.length}` });
      continue;
    }
    try {
      const [email = '', scope = '', topic = ''] = record;
      entries.push({
        address: suppressionAddress(undefused(email), 'email'),
        ...suppressionRule({ scope: scope.trim(), topic: undefused(topic.trim()) }),
      });
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      errors.push({ line, message: err.message });
    }
  }
  errors.sort((a, b) => a.line - b.line);
  return { entries, errors };
}
