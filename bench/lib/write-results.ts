import { execFileSync } from 'node:child_process';
import { statSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { REPO_ROOT } from './children.js';
import type { BenchContext } from './context.js';
import { renderTable, renderTargets, type Row } from './report.js';
import { SERVICE_ROOT } from './service.js';
import {
  CONNECTIONS,
  RUN_S,
  SMTP_IN_FLIGHT,
  SMTP_MAX_CONNECTIONS,
  TEMPORAL_CONCURRENCY,
  WARMUP_S,
  BATCH_SIZE,
} from './settings.js';
import { judge, type Figures } from './targets.js';

/** Prints the table, what bounds each figure and the targets, and writes it all to bench/results/<timestamp>.json. */
export async function writeResults(
  ctx: BenchContext,
  rows: Row[],
  figures: Figures,
  sourceAtStart: string | undefined,
): Promise<void> {
  const cores = os.cpus().length;
  const targets = judge(figures);
  const out: string[] = [];
  const sourceChanged = sourceAtStart !== sourceFingerprint();
  if (sourceChanged) {
    out.push(
      '',
      `WARNING: the service's code (src/, workflows/ of ${SERVICE_ROOT}) changed during this run: the figures may mix two versions ` +
        '(the workflow bundle is built at the start, the service loaded later). Measure a fixed copy with BENCH_SERVICE_ROOT (see bench/README.md).',
    );
  }
  out.push(
    '',
    `Results (${RUN_S} s per HTTP figure after a ${WARMUP_S} s warm-up; HTTP: autocannon, ${CONNECTIONS} connections; CPU in % of one core, ${cores * 100}% = all cores)`,
    '',
  );
  out.push(renderTable(rows, ctx.cpuColumns), '');
  out.push('What bounds each figure:');
  for (const r of rows) {
    out.push(`  ${r.what}`);
    if (r.limit) out.push(`      limit: ${r.limit}`);
    for (const n of r.notes ?? []) out.push(`      ${n}`);
  }
  out.push(
    '',
    'Targets:',
    targets.length > 0 ? renderTargets(targets) : '  (none: the parts they need did not run)',
    ...infoLines(figures),
  );

  const resultsDir = path.join(REPO_ROOT, 'bench/results');
  await fs.mkdir(resultsDir, { recursive: true });
  const file = path.join(resultsDir, `${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  const { service, memory } = figures;
  await fs.writeFile(
    file,
    `${JSON.stringify(
      {
        at: new Date().toISOString(),
        machine: {
          cores,
          cpu: os.cpus()[0]?.model,
          memoryGiB: Math.round(os.totalmem() / 2 ** 30),
          node: process.version,
          loadAverageAtEnd: os.loadavg(),
        },
        commit: gitDescribe(),
        sourceChangedDuringRun: sourceChanged,
        serviceRoot: SERVICE_ROOT,
        parts: [...ctx.parts],
        settings: {
          runS: RUN_S,
          warmupS: WARMUP_S,
          connections: CONNECTIONS,
          smtpMaxConnections: SMTP_MAX_CONNECTIONS,
          smtpInFlight: SMTP_IN_FLIGHT,
          temporalConcurrency: TEMPORAL_CONCURRENCY,
          accounts: service?.accountCount ?? 1,
          batchRuns: ctx.sizes.batchRuns,
          batchSize: BATCH_SIZE,
          scheduledCount: ctx.sizes.scheduledCount,
          scheduledLargeCount: ctx.sizes.scheduledLargeCount,
          memoryPending: ctx.sizes.memoryPending,
          webhookRate: ctx.sizes.webhookRate,
          deliverabilitySeconds: ctx.sizes.deliverabilitySeconds,
        },
        rows,
        // Every target with a stable key and its verdict, and the baselines alone: what bench/compare.ts reads.
        targets,
        baselines: baselineFigures(rows),
        jobs: {
          batch: service?.batch,
          templates: service?.templates,
          suppressions: service?.suppressions,
          scheduled: service?.scheduled,
          webhooks: service?.webhooks,
          memory,
        },
        deliverability: figures.deliverability,
        wallSeconds: Math.round(ctx.elapsed() / 1000),
      },
      null,
      2,
    )}\n`,
  );
  out.push('', `JSON: ${path.relative(REPO_ROOT, file)}`);
  process.stdout.write(`${out.join('\n')}\n`);
}

/** The rows that are baselines (their `what` says so): the bench's own noise is their spread across runs. */
function baselineFigures(rows: Row[]): { key: string; what: string; value: number; unit: string }[] {
  return rows
    .filter((r) => r.what.startsWith('baseline'))
    .map(({ key, what, value, unit }) => ({ key, what, value, unit }));
}

/** The figures that are not judged but put others in perspective. */
function infoLines({ baselines, service, memory, deliverability }: Figures): string[] {
  const lines: string[] = [];
  const startRate = baselines?.temporalStartRate;
  const { max, many } = service?.throughput ?? {};
  if (many && max)
    lines.push(
      `  (info) ${service!.accountCount} accounts vs 1: ${many.run.okPerSec} vs ${max.run.okPerSec} accepted/s; Temporal starts/s: ${startRate ?? 'not measured'}`,
    );
  const creation = [
    ...(service?.scheduled ?? [])
      .filter((l) => l.created > 0)
      .map((l) => `${l.creationPerSec}/s (all-in-one service, ${l.asked} for one second)`),
    memory && `${memory.creationPerSec}/s (API and worker apart)`,
  ].filter(Boolean);
  if (deliverability) {
    const { dkim, signedNodemailerRate } = deliverability;
    lines.push(
      `  (info) DKIM (RSA-2048): ${dkim.signCpuMs} CPU ms per message signed; raw nodemailer ${signedNodemailerRate}/s signed` +
        (baselines ? ` vs ${baselines.nodemailerRate}/s unsigned` : ''),
    );
  }
  if (creation.length > 0)
    lines.push(
      `  (info) scheduled emails created: ${creation.join(', ')}; Temporal starts alone: ${startRate !== undefined ? `${startRate}/s at ${TEMPORAL_CONCURRENCY} in flight` : 'not measured'}`,
    );
  return lines;
}

/**
 * What the measured service's code is: its HEAD and the mtimes of its changed and new files under src/
 * and workflows/. The workflow bundle is built at the start and the service loaded minutes later: a
 * change in between measures a mix of two versions, which the run then says.
 */
export function sourceFingerprint(): string | undefined {
  try {
    const git = (...args: string[]) =>
      execFileSync('git', args, { cwd: SERVICE_ROOT, stdio: ['ignore', 'pipe', 'ignore'] }).toString();
    const changed = git('ls-files', '-m', '-o', '--exclude-standard', '--', 'src', 'workflows')
      .split('\n')
      .filter(Boolean);
    const mtimes = changed.map((f) => {
      try {
        return `${f}@${statSync(path.join(SERVICE_ROOT, f)).mtimeMs}`;
      } catch {
        return `${f}@gone`;
      }
    });
    return [git('rev-parse', 'HEAD').trim(), ...mtimes].join('\n');
  } catch {
    return undefined;
  }
}

function gitDescribe(): { head: string; dirty: string[] } | undefined {
  try {
    const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: REPO_ROOT }).toString().trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--', 'src', 'workflows'], { cwd: REPO_ROOT })
      .toString()
      .split('\n')
      .filter(Boolean);
    return { head, dirty };
  } catch {
    return undefined;
  }
}
