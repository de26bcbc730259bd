import os from 'node:os';
import { loadConfig } from '../src/config.js';
import { createLogger } from '../src/logger.js';
import { createContext, type PartResult } from './lib/context.js';
import { cpuWindow } from './lib/cpu.js';
import { startInfrastructure } from './lib/infrastructure.js';
import { cleanupAll, installSignalHandlers } from './lib/lifecycle.js';
import { selectedParts } from './lib/parts.js';
import { NOISY_OTHER, type Row } from './lib/report.js';
import { sourceFingerprint, writeResults } from './lib/write-results.js';
import {
  BUDGET_MS,
  BUDGET_REFERENCE_SIGNED_PER_S,
  budgetScale,
  HARD_LIMIT_MS,
  INBOUND_MS,
  LISTS_MS,
  MIN_MS,
  readSizes,
  scheduledLargeMs,
  STATS_MS,
} from './lib/settings.js';
import type { Figures } from './lib/targets.js';
import { baselines } from './parts/baselines.js';
import { splitServiceMemory } from './parts/split-service-memory.js';
import { allInOneService } from './parts/all-in-one-service.js';
import { deliverability } from './parts/deliverability.js';
import { egress } from './parts/egress.js';
import { lists } from './parts/lists.js';
import { stats } from './parts/stats.js';

/**
 * `npm run bench`: the service's accept and delivery rates against baselines measured in the same run on
 * the same machine (README of this folder). Everything it starts lives under one temp dir and is
 * stopped and removed at the end, on error, at the deadline and on Ctrl-C.
 */

const t0 = performance.now();
const elapsed = () => performance.now() - t0;
// The lists, stats and inbound figures' time is their own (settings.ts, LISTS_MS, STATS_MS and INBOUND_MS), and so
// is the second scheduled burst's (scheduledLargeMs).
const extraMs = (() => {
  try {
    const parts = selectedParts();
    return (
      (parts.has('lists') ? LISTS_MS : 0) +
      (parts.has('stats') ? STATS_MS : 0) +
      (parts.has('inbound') ? INBOUND_MS : 0) +
      (parts.has('scheduled') ? scheduledLargeMs(readSizes().scheduledLargeCount) : 0)
    );
  } catch {
    return 0; // main() reports the bad BENCH_ONLY / BENCH_SKIP or size
  }
})();
// 1 until the baselines show this machine slower than the one the budget is sized for (settings.ts).
let scale = 1;
const planned = (ms: number) => ms * scale;
const remaining = () => planned(BUDGET_MS + extraMs) - elapsed();
const log = (msg: string) => process.stdout.write(`[${(elapsed() / 1000).toFixed(0).padStart(3)} s] ${msg}\n`);

let interrupted: string | undefined;

async function main(): Promise<void> {
  installSignalHandlers((signal) => {
    interrupted = signal;
  });
  const hardLimitMs = () => planned(HARD_LIMIT_MS + extraMs);
  let watchdog: NodeJS.Timeout | undefined;
  const armWatchdog = () => {
    clearTimeout(watchdog);
    watchdog = setTimeout(() => {
      process.stderr.write(`\nbench: hard time limit (${(hardLimitMs() / 1000).toFixed(0)} s) reached; cleaning up\n`);
      void cleanupAll().finally(() => process.exit(2));
    }, hardLimitMs() - elapsed()).unref();
  };
  armWatchdog();

  const parts = selectedParts();
  const sizes = readSizes();
  const sourceAtStart = sourceFingerprint();
  const logger = createLogger('warn', 'bench');
  const cores = os.cpus().length;
  log(
    `mailer bench on ${cores} cores (${os.cpus()[0]?.model ?? 'unknown CPU'}), Node ${process.version}; parts: ${[...parts].join(', ') || 'none'}`,
  );
  await reportMachineLoad(cores);

  const infra = await startInfrastructure(loadConfig(process.env), logger);
  log(
    `PostgreSQL, Temporal dev server (${infra.temporal.address}), SMTP sink (${infra.sink.ready.url}) and workflow bundles ready`,
  );
  const ctx = createContext({ parts, sizes, infra, log, elapsed, remaining, planned });

  const rows: Row[] = [];
  const figuresOf = async <F>(part: Promise<PartResult<F>>): Promise<F> => {
    const result = await part;
    rows.push(...result.rows);
    return result.figures;
  };
  const figures: Figures = {};
  if (parts.has('baselines')) {
    figures.baselines = await figuresOf(baselines(ctx, logger));
    scale = budgetScale(figures.baselines.signedNodemailerRate);
    if (scale > 1) {
      armWatchdog();
      log(
        `time budget ${(planned(BUDGET_MS + extraMs) / 1000).toFixed(0)} s, watchdog at ${(hardLimitMs() / 1000).toFixed(0)} s: ` +
          `${scale.toFixed(2)} x the plan, as this machine signs ${figures.baselines.signedNodemailerRate!.toFixed(0)} mails/s against the ${BUDGET_REFERENCE_SIGNED_PER_S} it is sized for`,
      );
    }
  }
  if (
    (['throughput', 'batch', 'templates', 'suppressions', 'inbound', 'scheduled', 'webhooks'] as const).some((p) =>
      parts.has(p),
    )
  )
    figures.service = await figuresOf(allInOneService(ctx, figures.baselines));
  if (parts.has('deliverability')) {
    if (remaining() < planned(MIN_MS.deliverability!))
      log(`skipping the deliverability figures: ${(remaining() / 1000).toFixed(0)} s left in the budget`);
    else figures.deliverability = await figuresOf(deliverability(ctx));
  }
  if (parts.has('memory')) {
    if (remaining() < planned(MIN_MS.memory!))
      log(`skipping the worker memory figure: ${(remaining() / 1000).toFixed(0)} s left in the budget`);
    else figures.memory = await figuresOf(splitServiceMemory(ctx));
  }
  if (parts.has('lists')) figures.lists = await figuresOf(lists(ctx));
  if (parts.has('stats')) figures.stats = await figuresOf(stats(ctx));
  if (parts.has('egress')) figures.egress = await figuresOf(egress(ctx));
  await writeResults(ctx, rows, figures, sourceAtStart);
}

/** The figures are only this machine's if nothing else runs: says so when something does. */
async function reportMachineLoad(cores: number): Promise<void> {
  const idle = cpuWindow([]);
  await new Promise((r) => setTimeout(r, 1000));
  const before = idle.stop().machineBusy;
  log(
    `machine busy before start: ${before}% of ${cores * 100}%${before >= NOISY_OTHER ? ' (NOT QUIET: other workloads will lower the figures)' : ''}`,
  );
}

let failed = false;
try {
  await main();
} catch (err) {
  failed = true;
  if (interrupted) process.stderr.write(`bench interrupted (${interrupted})\n`);
  else process.stderr.write(`bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
} finally {
  log('cleaning up');
  await cleanupAll();
  log(`done in ${(elapsed() / 1000).toFixed(0)} s`);
}
process.exit(failed ? 1 : 0);
