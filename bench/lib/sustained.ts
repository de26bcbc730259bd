import { setTimeout as sleep } from 'node:timers/promises';
import type { BaselineFigures } from '../parts/baselines.js';
import { backlogSlope, sampleBacklog, type BacklogSample } from './backlog.js';
import type { PartContext } from './context.js';
import type { CpuUsage } from './cpu.js';
import { drain, httpRow, untilSinkQuiet } from './http-figure.js';
import { fixedRate, type HttpTarget } from './load.js';
import type { Row } from './report.js';
import { SUSTAINED_S } from './settings.js';
import { slowest } from './slowest-baseline.js';

/** The backlog's trend is judged on the run's last 20 s: the first 10 s hold the ramp-up and the pipeline filling. */
export const SLOPE_WINDOW_S = 20;

/** Where the fixed rate came from: half the slowest baseline of the run, or (no baselines) the max run's delivered rate. */
export type SustainedBasis =
  { from: 'baselines'; name: string; baselineRate: number } | { from: 'max-delivered'; maxDelivered: number };

/** The throughput target measured as stated: a fixed rate for 30 s, accepted against delivered each second. */
export interface SustainedFigures {
  rate: number;
  basis: SustainedBasis;
  runS: number;
  accepted: number;
  acceptedPerSec: number;
  /** Delivered by `endS`, the last sample with every lane sending (~SUSTAINED_S into the run). */
  deliveredDuringRun: number;
  endS: number;
  /** Accepted - delivered at `endS`. */
  backlogEnd: number;
  /** Least-squares slope of the backlog over the last SLOPE_WINDOW_S seconds (emails/s). */
  slopePerSec: number;
  /** From the end of the load until everything accepted was at the sink (or the cap). */
  drainS: number;
  drainComplete: boolean;
  samples: BacklogSample[];
}

export function sustainedRate(
  baselines: BaselineFigures | undefined,
  maxDelivered: number,
): { rate: number; basis: SustainedBasis } {
  if (!baselines) return { rate: Math.max(1, maxDelivered), basis: { from: 'max-delivered', maxDelivered } };
  const s = slowest(baselines);
  return {
    rate: Math.max(1, Math.ceil(0.5 * s.rate)),
    basis: { from: 'baselines', name: s.name, baselineRate: s.rate },
  };
}

export function basisText(b: SustainedBasis): string {
  return b.from === 'baselines'
    ? `0.5 x ${b.name} ${b.baselineRate}/s`
    : `the max run's delivered rate ${b.maxDelivered}/s: the baselines did not run`;
}

/** The sustained run on one account: the load, a sample a second, then the drain; two rows. */
export async function sustainedRun(
  ctx: PartContext,
  target: HttpTarget,
  { rate, basis }: ReturnType<typeof sustainedRate>,
  drainCapMs: number,
): Promise<SustainedFigures> {
  // A closed-loop run ends with requests in flight that it does not count but the service accepted: their
  // mail must be in before the count starts, or it passes for this run's and hides a backlog.
  await untilSinkQuiet(ctx, 5_000);
  const before = (await ctx.infra.sinkCount()).total;
  let accepted = 0;
  const whole = ctx.window();
  const w = ctx.window();
  const running = fixedRate('service-sustained', target, rate, SUSTAINED_S, { onOk: () => accepted++ });
  const samples = await sampleBacklog(ctx, before, () => accepted, running);
  const run = await running;
  const cpu = w.stop();
  // The load stops when the last lane (started 1000 x (lanes - 1) / lanes ms late) has run SUSTAINED_S; the
  // run resolves a little later (autocannon's results), so the drain is timed from the load's end.
  const loadEnd = run.startedAt + SUSTAINED_S * 1000 + (1000 * (run.connections - 1)) / run.connections;
  const drainStart = performance.now();
  const d = await drain(ctx, before, run.ok, drainCapMs);
  const wholeCpu = whole.stop();
  await sleep(500);
  // Backlog and delivered as the load stopped: the last sample with every lane sending.
  const end = fullRate(samples).at(-1) ?? { t: run.durationS, accepted: run.ok, delivered: d.atStart };
  const figures: SustainedFigures = {
    rate,
    basis,
    runS: run.durationS,
    accepted: run.ok,
    acceptedPerSec: run.okPerSec,
    deliveredDuringRun: end.delivered,
    endS: round1(end.t),
    backlogEnd: end.accepted - end.delivered,
    slopePerSec: round1(backlogSlope(fullRate(samples), SLOPE_WINDOW_S)),
    drainS: round1(d.drainS + (drainStart - loadEnd) / 1000),
    drainComplete: d.complete,
    samples,
  };
  const what = `service: 1 account, fixed ${rate}/s for ${SUSTAINED_S} s (${basisText(basis)})`;
  ctx.addRow(httpRow('service-sustained', what, run, cpu, [`asked ${rate}/s, accepted ${run.ok} = ${run.okPerSec}/s`]));
  ctx.addRow(deliveredRow(what, figures, wholeCpu, d.duplicates));
  return figures;
}

function deliveredRow(what: string, f: SustainedFigures, cpu: CpuUsage, duplicates: number): Row {
  const perSec = Math.round(f.deliveredDuringRun / f.endS);
  const trace = f.samples
    .filter((s, i) => i % 5 === 4 || i === f.samples.length - 1)
    .map((s) => `${Math.round(s.t)} s: ${s.accepted - s.delivered}`);
  return {
    key: 'service-sustained-delivered',
    what: `${what}: delivered during the run`,
    value: perSec,
    unit: 'mails/s',
    cpu,
    notes: [
      `${f.deliveredDuringRun} delivered in the first ${f.endS} s (${f.accepted} accepted in all); backlog then ${f.backlogEnd}, ` +
        `slope over the last ${SLOPE_WINDOW_S} s ${f.slopePerSec} emails/s; drain from the end of the load ${f.drainS.toFixed(1)} s${f.drainComplete ? '' : ' (cut short: not all delivered)'}`,
      `backlog (accepted - delivered): ${trace.join(', ')}`,
      ...(duplicates > 0 ? [`${duplicates} duplicate Message-IDs at the sink`] : []),
    ],
    detail: { ...f },
  };
}

/**
 * The samples taken while every lane was sending: the lanes start staggered over the first second and
 * each stops SUSTAINED_S after its start, so the load tapers off in the last second (the backlog falls).
 */
const fullRate = (samples: BacklogSample[]) => samples.filter((s) => s.t < SUSTAINED_S + 0.5);

const round1 = (v: number) => Math.round(v * 10) / 10;
