import type { PartContext } from '../lib/context.js';
import type { ServiceHandle } from '../lib/service.js';

/**
 * Suppression import and export (issue 25, point 3; bench/README.md, "Suppressions"): one request of 100,000
 * CSV rows (`email,scope,topic`, a third of them for a broadcast topic) against the service's default account,
 * timed from sending the body to the answer; the same file again (every row already there: `skipped`); then
 * the account's list exported, streamed, timed to the last byte.
 */

export const IMPORT_ROWS = 100_000;
/** The target: 100,000 rows in one request answered within this. */
export const IMPORT_TARGET_S = 10;

export interface ImportRun {
  seconds: number;
  status: number;
  imported: number;
  skipped: number;
  errors: number;
}

export interface SuppressionsFigures {
  rows: number;
  bytes: number;
  first: ImportRun;
  again: ImportRun;
  export: { seconds: number; status: number; lines: number; bytes: number };
}

/** The import file: distinct addresses over 100 domains, every third row for one of 5 topics. */
function importFile(rows: number): string {
  const lines = ['email,scope,topic'];
  for (let i = 0; i < rows; i++)
    lines.push(
      i % 3 === 0
        ? `subscriber${i}@list${i % 100}.example.org,broadcast,topic-${i % 5}`
        : `Subscriber${i}@List${i % 100}.example.org,,`,
    );
  return `${lines.join('\r\n')}\r\n`;
}

async function importOnce(service: ServiceHandle, csv: string): Promise<ImportRun> {
  const t0 = performance.now();
  const res = await fetch(`${service.baseUrl}/v1/mail/suppressions/import`, {
    method: 'POST',
    headers: { authorization: `Bearer ${service.apiKey}`, 'content-type': 'text/csv' },
    body: csv,
  });
  const text = await res.text();
  const seconds = (performance.now() - t0) / 1000;
  if (!res.ok) return { seconds, status: res.status, imported: 0, skipped: 0, errors: 0 };
  const body = JSON.parse(text) as { imported: number; skipped: number; errors: unknown[] };
  return { seconds, status: res.status, imported: body.imported, skipped: body.skipped, errors: body.errors.length };
}

export async function suppressionFigures(ctx: PartContext, service: ServiceHandle): Promise<SuppressionsFigures> {
  const csv = importFile(IMPORT_ROWS);
  const bytes = Buffer.byteLength(csv);
  const round = (s: number) => Math.round(s * 100) / 100;
  const run = async (what: string, notes: (r: ImportRun) => string) => {
    const w = ctx.window();
    const r = { ...(await importOnce(service, csv)) };
    r.seconds = round(r.seconds);
    ctx.addServiceRow({
      key: `suppressions-import-${what}`,
      what: `suppressions: import of ${IMPORT_ROWS.toLocaleString('en')} rows (${what})`,
      value: r.seconds,
      unit: 's',
      cpu: w.stop(),
      cpuUnits: { count: IMPORT_ROWS, per: 'row' },
      notes: [`HTTP ${r.status}: ${notes(r)}; ${(bytes / 1e6).toFixed(1)} MB of CSV`],
    });
    return r;
  };
  const first = await run('all new', (r) => `imported ${r.imported}, skipped ${r.skipped}, errors ${r.errors}`);
  const again = await run('all present', (r) => `imported ${r.imported}, skipped ${r.skipped}, errors ${r.errors}`);

  const w = ctx.window();
  const t0 = performance.now();
  const res = await fetch(`${service.baseUrl}/v1/mail/suppressions/export`, {
    headers: { authorization: `Bearer ${service.apiKey}` },
  });
  const text = await res.text();
  const seconds = (performance.now() - t0) / 1000;
  const lines = text.split('\r\n').length - 2;
  ctx.addServiceRow({
    key: 'suppressions-export',
    what: `suppressions: export of the account's list (streamed)`,
    value: round(seconds),
    unit: 's',
    cpu: w.stop(),
    cpuUnits: { count: Math.max(lines, 1), per: 'row' },
    notes: [`HTTP ${res.status}: ${lines} rows, ${(Buffer.byteLength(text) / 1e6).toFixed(1)} MB`],
  });
  return {
    rows: IMPORT_ROWS,
    bytes,
    first,
    again,
    export: { seconds: round(seconds), status: res.status, lines, bytes: Buffer.byteLength(text) },
  };
}
