import autocannon from 'autocannon';

/**
 * HTTP load from the bench process with autocannon. Two shapes:
 *
 * - `maxRate`: closed loop, `connections` keep-alive connections each with one request in flight, for a
 *   fixed time: the most the server answers per second, and the latency at that load.
 * - `fixedRate`: an (almost) even arrival rate. autocannon's own rate limit sends each connection's
 *   quota for a second as one burst at the start of that second, all connections in step, which is the
 *   maximum load for part of every second. So the rate is spread over many one-connection autocannon
 *   instances, each allowed a few requests a second, started evenly staggered across one second.
 *
 * Latencies are taken per response from autocannon's `response` event (sub-millisecond; autocannon's own
 * histogram rounds to whole milliseconds and, under a rate, adds coordinated-omission corrections meant
 * for evenly paced clients) and only for 200 responses.
 *
 * A fixed-rate run may start with a ramp: its lanes start across the first second, and creating a hundred
 * autocannon instances keeps the bench's own event loop busy for about half of that second (a probe of
 * session 22 measured 440 ms of stalls in it, against 10-20 ms in each later second), so the responses
 * to requests sent then time the client as much as the service. Their latencies are kept apart
 * (`ramp.latencyMs`) and the run is that much longer, so the measured part still lasts as asked.
 */
export interface HttpRun {
  label: string;
  mode: 'max' | 'fixed';
  connections: number;
  /** fixed: the arrival rate asked for (requests/s). */
  targetRate?: number;
  durationS: number;
  /** 200 responses. */
  ok: number;
  okPerSec: number;
  statuses: Record<string, number>;
  errors: number;
  timeouts: number;
  latencyMs: Percentiles;
  /** fixed with a ramp: its length, and the latencies of the requests sent in it (not in `latencyMs`). */
  ramp?: { seconds: number; latencyMs: Percentiles };
  /** performance.now() at the start and end of the run. */
  startedAt: number;
  endedAt: number;
}

export interface Percentiles {
  p50: number;
  p90: number;
  p99: number;
  p999: number;
  max: number;
  mean: number;
}

export interface HttpTarget {
  url: string;
  method?: 'POST' | 'GET';
  headers: Record<string, string>;
  body?: string;
  /** Connection i uses headers[i % length] (e.g. one API key per account). */
  headersPerConnection?: Record<string, string>[];
}

export function percentiles(values: number[]): Percentiles {
  if (values.length === 0) return { p50: NaN, p90: NaN, p99: NaN, p999: NaN, max: NaN, mean: NaN };
  const sorted = Float64Array.from(values).sort();
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
  let sum = 0;
  for (const v of sorted) sum += v;
  const r = (v: number) => Math.round(v * 100) / 100;
  return {
    p50: r(at(0.5)),
    p90: r(at(0.9)),
    p99: r(at(0.99)),
    p999: r(at(0.999)),
    max: r(sorted[sorted.length - 1]!),
    mean: r(sum / sorted.length),
  };
}

interface Collector {
  latencies: number[];
  /** Requests sent before this (performance.now()) are the ramp's: their latencies go to `rampLatencies`. */
  rampEndsAt?: number;
  rampLatencies?: number[];
  statuses: Record<string, number>;
  /** Called on each 200 as it arrives (a run returns only at its end; a sampler counts as it goes). */
  onOk?: () => void;
}

function runOne(
  options: autocannon.Options,
  collector: Collector,
  connectionIndex: () => number,
  target: HttpTarget,
): Promise<autocannon.Result> {
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        ...options,
        method: target.method ?? 'POST',
        headers: target.headers,
        ...(target.body !== undefined ? { body: target.body } : {}),
        setupClient: (client) => {
          const per = target.headersPerConnection;
          if (per && per.length > 0) client.setHeaders({ ...target.headers, ...per[connectionIndex() % per.length] });
        },
      },
      (err, result) => (err ? reject(err) : resolve(result)),
    );
    instance.on('response', (_client, statusCode, _bytes, responseTime) => {
      collector.statuses[statusCode] = (collector.statuses[statusCode] ?? 0) + 1;
      if (statusCode !== 200) return;
      if (collector.rampEndsAt !== undefined && performance.now() - responseTime < collector.rampEndsAt)
        collector.rampLatencies?.push(responseTime);
      else collector.latencies.push(responseTime);
      collector.onOk?.();
    });
  });
}

export async function maxRate(
  label: string,
  target: HttpTarget,
  connections: number,
  durationS: number,
): Promise<HttpRun> {
  const collector: Collector = { latencies: [], statuses: {} };
  let next = 0;
  const startedAt = performance.now();
  const result = await runOne({ url: target.url, connections, duration: durationS }, collector, () => next++, target);
  const endedAt = performance.now();
  const ok = result.statusCodeStats['200']?.count ?? 0;
  return {
    label,
    mode: 'max',
    connections,
    durationS: result.duration,
    ok,
    okPerSec: Math.round(ok / result.duration),
    statuses: collector.statuses,
    errors: result.errors,
    timeouts: result.timeouts,
    latencyMs: percentiles(collector.latencies),
    startedAt,
    endedAt,
  };
}

/** Requests a second each lane is allowed: small, so that one lane's burst is short. */
const PER_LANE = 4;
const MAX_LANES = 250;

export interface FixedRateOptions {
  /** Called on each 200 as it arrives. */
  onOk?: () => void;
  /** Seconds at the start whose requests' latencies are kept apart; the run lasts that much longer. */
  rampS?: number;
}

export async function fixedRate(
  label: string,
  target: HttpTarget,
  rate: number,
  measuredS: number,
  { onOk, rampS = 0 }: FixedRateOptions = {},
): Promise<HttpRun> {
  const total = Math.max(1, Math.round(rate));
  const lanes = Math.min(MAX_LANES, Math.max(1, Math.ceil(total / PER_LANE)));
  const durationS = measuredS + rampS;
  let next = 0;
  const startedAt = performance.now();
  const collector: Collector = {
    latencies: [],
    statuses: {},
    ...(onOk ? { onOk } : {}),
    ...(rampS > 0 ? { rampEndsAt: startedAt + rampS * 1000, rampLatencies: [] } : {}),
  };
  const results = await Promise.all(
    Array.from({ length: lanes }, (_, i) => {
      const laneRate = Math.floor(total / lanes) + (i < total % lanes ? 1 : 0);
      return new Promise<autocannon.Result>((resolve, reject) => {
        setTimeout(
          () => {
            runOne(
              { url: target.url, connections: 1, connectionRate: laneRate, duration: durationS },
              collector,
              () => next++,
              target,
            ).then(resolve, reject);
          },
          Math.floor((i * 1000) / lanes),
        );
      });
    }),
  );
  const endedAt = performance.now();
  const ok = results.reduce((n, r) => n + (r.statusCodeStats['200']?.count ?? 0), 0);
  const meanDuration = results.reduce((s, r) => s + r.duration, 0) / results.length;
  return {
    label,
    mode: 'fixed',
    connections: lanes,
    targetRate: total,
    durationS: Math.round(meanDuration * 100) / 100,
    ok,
    okPerSec: Math.round(ok / meanDuration),
    statuses: collector.statuses,
    errors: results.reduce((n, r) => n + r.errors, 0),
    timeouts: results.reduce((n, r) => n + r.timeouts, 0),
    latencyMs: percentiles(collector.latencies),
    ...(collector.rampLatencies ? { ramp: { seconds: rampS, latencyMs: percentiles(collector.rampLatencies) } } : {}),
    startedAt,
    endedAt,
  };
}
