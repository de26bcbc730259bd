import { setTimeout as sleep } from 'node:timers/promises';
import type { BenchContext } from './context.js';

/** Accepted (200s) and delivered (at the sink) since the start of a run, `t` seconds into it. */
export interface BacklogSample {
  t: number;
  accepted: number;
  delivered: number;
}

/**
 * Samples accepted and delivered once a second from now until `run` settles. `accepted` is read after the
 * sink answers, so that both counts are "up to now" (the backlog is not overstated by the round trip).
 */
export async function sampleBacklog(
  ctx: BenchContext,
  sinkBefore: number,
  accepted: () => number,
  run: Promise<unknown>,
): Promise<BacklogSample[]> {
  const start = performance.now();
  const finished = run.then(
    () => 'done' as const,
    () => 'done' as const,
  );
  const samples: BacklogSample[] = [];
  for (let k = 1; ; k++) {
    const tick = sleep(Math.max(0, start + k * 1000 - performance.now())).then(() => 'tick' as const);
    if ((await Promise.race([tick, finished])) === 'done') return samples;
    const delivered = (await ctx.infra.sinkCount()).total - sinkBefore;
    samples.push({ t: (performance.now() - start) / 1000, accepted: accepted(), delivered });
  }
}

/** Least-squares slope of the backlog (accepted - delivered) over the samples of the last `windowS` seconds, emails/s. */
export function backlogSlope(samples: BacklogSample[], windowS: number): number {
  const last = samples.at(-1);
  if (!last) return NaN;
  const pts = samples.filter((s) => s.t >= last.t - windowS).map((s) => ({ x: s.t, y: s.accepted - s.delivered }));
  if (pts.length < 2) return NaN;
  const mx = pts.reduce((n, p) => n + p.x, 0) / pts.length;
  const my = pts.reduce((n, p) => n + p.y, 0) / pts.length;
  const sxy = pts.reduce((n, p) => n + (p.x - mx) * (p.y - my), 0);
  const sxx = pts.reduce((n, p) => n + (p.x - mx) ** 2, 0);
  return sxy / sxx;
}
