import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { MAX_FIELD_CHARS, MAX_RECIPIENTS, parseFeedbackReport } from '../../src/inbound/feedback-report.js';

const fixture = (name: string) => fs.readFileSync(path.join(import.meta.dirname, '../fixtures/feedback', name), 'utf8');
const FIELD_BYTES = 64 * 1024;
/** Far above what a linear parse of these reports takes, below what the quadratic ones took (166 ms to seconds). */
const BUDGET_MS = 80;

/**
 * The CPU time of a parse, the best of a few: CPU time, not wall time, because the machine is shared (a test
 * run beside other work would otherwise measure the waiting), and the first run also warms up the JIT.
 */
async function timed(raw: string): Promise<{ ms: number; report: Awaited<ReturnType<typeof parseFeedbackReport>> }> {
  let best = Infinity;
  let report;
  for (let i = 0; i < 5; i++) {
    const start = process.cpuUsage();
    report = await parseFeedbackReport(Buffer.from(raw));
    const used = process.cpuUsage(start);
    best = Math.min(best, (used.user + used.system) / 1000);
  }
  return { ms: best, report };
}

const arf = (field: string, value: string) =>
  fixture('arf-yahoo.eml').replace(new RegExp(`^${field}: .*$`, 'm'), () => `${field}: ${value}`);
const dsn = (field: string, value: string) =>
  fixture('dsn-postfix.eml').replace(new RegExp(`^${field}: .*$`, 'm'), () => `${field}: ${value}`);

describe('a report with a 64 KB pathological field parses in linear time', () => {
  const cases: [string, () => string][] = [
    [
      'an Arrival-Date of opening parentheses',
      () => arf('Arrival-Date', `Tue, 04 Mar 2025 10:15:02 +0000 ${'('.repeat(FIELD_BYTES)}`),
    ],
    ['an Arrival-Date of comments', () => arf('Arrival-Date', '(a)'.repeat(FIELD_BYTES / 3))],
    ['an Arrival-Date of spaces and parentheses', () => arf('Arrival-Date', ' ('.repeat(FIELD_BYTES / 2))],
    [
      'an Original-Rcpt-To of spaces after its type',
      () => arf('Original-Rcpt-To', `rfc822;${' '.repeat(FIELD_BYTES)}\r`),
    ],
    ['an Original-Rcpt-To of angle brackets', () => arf('Original-Rcpt-To', `<${'<'.repeat(FIELD_BYTES)}`)],
    [
      'a Feedback-Type folded over thousands of lines',
      () => arf('Feedback-Type', `abuse${'\n x'.repeat(FIELD_BYTES / 3)}`),
    ],
    [
      'thousands of Original-Rcpt-To fields',
      () =>
        arf(
          'Original-Rcpt-To',
          Array.from({ length: FIELD_BYTES / 24 }, (_, i) => `r${i}@example.net`).join('\nOriginal-Rcpt-To: '),
        ),
    ],
    ['a Diagnostic-Code of type characters', () => dsn('Diagnostic-Code', `${'a'.repeat(FIELD_BYTES)}`)],
    ['a Diagnostic-Code of spaces before a semicolon', () => dsn('Diagnostic-Code', `smtp${' '.repeat(FIELD_BYTES)}x`)],
    ['a Status of almost-codes', () => dsn('Status', '5.1.'.repeat(FIELD_BYTES / 4))],
    ['a Final-Recipient of at signs', () => dsn('Final-Recipient', `rfc822; ${'@'.repeat(FIELD_BYTES)}`)],
    [
      'a quoted Message-ID of opening brackets',
      () =>
        fixture('dsn-postfix.eml').replace(
          /^Message-ID: <em_.*$/m,
          () => `Message-ID: ${'<a'.repeat(FIELD_BYTES / 2)}`,
        ),
    ],
  ];
  it.each(cases)('%s', async (_name, make) => {
    const raw = make();
    expect(raw.length).toBeGreaterThan(FIELD_BYTES);
    const { ms } = await timed(raw);
    expect(ms).toBeLessThan(BUDGET_MS);
  });
});

describe('field lengths are bounded', () => {
  it('an over-long date is no date; a date with a trailing comment is one', async () => {
    expect(
      await parseFeedbackReport(
        Buffer.from(arf('Arrival-Date', `Tue, 04 Mar 2025 10:15:02 +0000 (${'x'.repeat(500)})`)),
      ),
    ).not.toHaveProperty('arrivalDate');
    expect(
      await parseFeedbackReport(Buffer.from(arf('Arrival-Date', 'Tue, 04 Mar 2025 10:15:02 +0000 (UTC)'))),
    ).toMatchObject({ arrivalDate: new Date('2025-03-04T10:15:02Z') });
  });

  it('an over-long feedback type is none', async () => {
    expect(
      await parseFeedbackReport(Buffer.from(arf('Feedback-Type', `abuse${'x'.repeat(FIELD_BYTES)}`))),
    ).toBeUndefined();
  });

  it(`at most ${MAX_RECIPIENTS} Original-Rcpt-To are read`, async () => {
    const many = Array.from({ length: 300 }, (_, i) => `r${i}@example.net`).join('\nOriginal-Rcpt-To: ');
    const report = await parseFeedbackReport(Buffer.from(arf('Original-Rcpt-To', many)));
    expect(report?.kind === 'complaint' && report.recipients.length).toBe(MAX_RECIPIENTS);
  });

  it('a diagnostic is cut, and a folded field stops growing', async () => {
    const report = await parseFeedbackReport(
      Buffer.from(dsn('Diagnostic-Code', `smtp; 550 5.1.1 ${'x'.repeat(FIELD_BYTES)}`)),
    );
    expect(report?.kind === 'bounce' && report.recipients[0]!.diagnostic_code.length).toBe(1000);
    const folded = await parseFeedbackReport(
      Buffer.from(dsn('Diagnostic-Code', `smtp; 550 5.1.1 gone${'\n more'.repeat(FIELD_BYTES / 6)}`)),
    );
    expect(folded?.kind === 'bounce' && folded.recipients[0]!.diagnostic_code.length).toBeLessThanOrEqual(
      MAX_FIELD_CHARS,
    );
    expect(folded?.kind === 'bounce' && folded.recipients[0]!.status).toBe('5.1.1');
  });
});
