import { describe, expect, it } from 'vitest';
import type { BaselineFigures } from '../../bench/parts/baselines.js';
import type { LatenessResult } from '../../bench/parts/scheduled-lateness.js';
import type { ServiceRun, ThroughputFigures } from '../../bench/parts/throughput.js';
import type { HttpRun } from '../../bench/lib/load.js';
import type { SustainedFigures } from '../../bench/lib/sustained.js';
import { judge, type Figures } from '../../bench/lib/targets.js';
import type { MemoryResult } from '../../bench/parts/worker-memory.js';

/** Issue 30's targets as lib/targets.ts judges them, on figures made up for the edge of each. */

const p = (p99: number) => ({ p50: p99 / 2, p90: p99, p99, p999: p99, max: p99, mean: p99 / 2 });
const serviceRun = (deliveredPerSec: number, p99 = 5): ServiceRun => ({
  run: { okPerSec: 2 * deliveredPerSec, latencyMs: p(p99), ok: 1000 } as unknown as HttpRun,
  deliveredPerSec,
});
const baselines: BaselineFigures = {
  insertRate: 4000,
  nodemailerRate: 3000,
  signedNodemailerRate: 1500,
  temporalStartRate: 270,
};
const sustained = (slopePerSec: number): SustainedFigures => ({
  rate: 750,
  basis: { from: 'baselines', name: 'DKIM-signed nodemailer', baselineRate: 1500 },
  runS: 30,
  accepted: 22_500,
  acceptedPerSec: 750,
  deliveredDuringRun: 21_000,
  endS: 30,
  backlogEnd: 1_200,
  slopePerSec,
  drainS: 1.5,
  drainComplete: true,
  samples: [],
});
const throughput = (over: Partial<ThroughputFigures> = {}): ThroughputFigures => ({
  max: serviceRun(1350),
  half: serviceRun(600, 9.9),
  halfRate: 600,
  many: serviceRun(1340),
  sustained: sustained(-0.5),
  ...over,
});
const burst = (asked: number, p99: number, rawMs: number): LatenessResult => ({
  asked,
  created: asked,
  arrived: asked,
  exactlyOnce: asked,
  duplicates: 0,
  early: 0,
  lateMs: p(p99),
  creationPerSec: 400,
  raw: { count: asked, sent: asked, failed: 0, arrived: asked, ms: rawMs },
  quietMs: 8_000,
});
const verdicts = (figures: Figures) => Object.fromEntries(judge(figures).map((t) => [t.key, t.met]));
const figures = (t: ThroughputFigures, scheduled?: LatenessResult[]): Figures => ({
  baselines,
  service: { accountCount: 10, throughput: t, ...(scheduled ? { scheduled } : {}) },
});

const memory = (pending: number, deltaMB: number): MemoryResult => ({
  asked: 10_000,
  pending,
  idleRssKiB: 220_000,
  loadedRssKiB: 220_000 + deltaMB * 977,
  deltaMB,
  creationPerSec: pending / 10,
  creationS: 10,
  cutShort: pending < 10_000,
});

describe("bench targets: issue 30's", () => {
  it('worker memory: judged on the emails it held pending, NOT MET when there were none', () => {
    const judged = (m: MemoryResult) => judge({ memory: m }).find((t) => t.key === 'worker-memory');
    expect(judged(memory(10_000, 29.9))?.met).toBe(true);
    expect(judged(memory(10_000, 30.1))?.met).toBe(false);
    expect(judged(memory(0, 0.6))?.met).toBe(false);
    expect(judged(memory(0, 0.6))?.formula).toContain('NOTHING pending');
  });

  it('delivered / the slowest baseline >= 0.90, for 1 account and for 10, each on its own run', () => {
    // 1350 / 1500 = 0.90 exactly; 10 accounts 1340 / 1500 = 0.893.
    expect(verdicts(figures(throughput()))).toMatchObject({
      'delivered-ratio': true,
      'delivered-ratio-accounts': false,
    });
    expect(verdicts(figures(throughput({ many: serviceRun(1400) })))['delivered-ratio-accounts']).toBe(true);
  });

  it('judges the 10-account ratio NOT MET, not absent, when the run was left out', () => {
    const { many: _, ...withoutMany } = throughput();
    const t = judge(figures(withoutMany)).find((x) => x.key === 'delivered-ratio-accounts')!;
    expect(t.met).toBe(false);
    expect(t.shown).toBe('not run');
  });

  it('judges the sustained run NOT MET, not absent, when the budget left it out; once when it ran', () => {
    const { sustained: _, ...withoutSustained } = throughput();
    const left = judge(figures(withoutSustained)).filter((x) => x.key === 'sustained');
    expect(left.map((t) => [t.met, t.shown])).toEqual([[false, 'not run']]);
    expect(judge(figures(throughput())).filter((x) => x.key === 'sustained')).toHaveLength(1);
  });

  it('the sustained run needs a falling backlog: a slope of 0 is not met', () => {
    expect(verdicts(figures(throughput({ sustained: sustained(-0.1) }))).sustained).toBe(true);
    expect(verdicts(figures(throughput({ sustained: sustained(0) }))).sustained).toBe(false);
  });

  it('p99 accept latency at half the sustained rate <= 10 ms', () => {
    expect(verdicts(figures(throughput({ half: serviceRun(600, 10) })))['accept-p99']).toBe(true);
    expect(verdicts(figures(throughput({ half: serviceRun(600, 10.1) })))['accept-p99']).toBe(false);
  });

  it('each scheduled burst: p99 lateness <= 1.2 x raw signed nodemailer for as many, in the same run', () => {
    const v = verdicts(figures(throughput(), [burst(1000, 840, 700), burst(10_000, 9_100, 7_500)]));
    expect(v).toMatchObject({ 'scheduled-p99': true, 'scheduled-large-p99': false });
    expect(v).toMatchObject({ 'scheduled-early': true, 'scheduled-once': true, 'scheduled-large-once': true });
    // No raw time (its messages did not all arrive): nothing to hold the lateness against, NOT MET.
    const noRaw = burst(1000, 100, NaN);
    expect(verdicts(figures(throughput(), [noRaw]))['scheduled-p99']).toBe(false);
  });

  it('a burst the budget left out is NOT MET on every target', () => {
    const skipped: LatenessResult = {
      ...burst(10_000, NaN, NaN),
      created: 0,
      arrived: 0,
      exactlyOnce: 0,
      skipped: 'not run: 30 s left in the budget',
    };
    const v = verdicts(figures(throughput(), [burst(1000, 500, 700), skipped]));
    expect(v).toMatchObject({
      'scheduled-large-early': false,
      'scheduled-large-p99': false,
      'scheduled-large-once': false,
    });
  });
});
