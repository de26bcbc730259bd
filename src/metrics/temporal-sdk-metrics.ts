import type { BufferedMetricUpdate } from '@temporalio/worker';

/**
 * The Temporal SDK's own metrics (worker task latencies, slots, pollers, requests to the server), which
 * its Rust core hands over as a buffer of updates (temporal/sdk-runtime.ts). They are per process, like the
 * runtime, so this store is too: every /metrics of the process shows the same ones. Names follow what the
 * SDK's Prometheus exporter makes with its `countersTotalSuffix` and `unitSuffix` options and durations in
 * seconds: `temporal_request_total`, `temporal_activity_execution_latency_seconds_bucket` ...
 */

type Kind = 'counter' | 'gauge' | 'histogram';
interface Series {
  labels: Record<string, string>;
  value: number;
  /** Histograms: observations at or below each bound (not cumulative until rendered), their sum. */
  counts?: number[];
  sum?: number;
}
interface Family {
  name: string;
  help: string;
  type: Kind;
  bounds: number[];
  series: Map<string, Series>;
}

const SECONDS_BOUNDS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
const OTHER_BOUNDS = [1, 2, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000];

const families = new Map<string, Family>();
let source: (() => Iterable<BufferedMetricUpdate>) | undefined;

/** Where updates come from: the runtime's buffer, once the runtime is installed. */
export function setTemporalMetricsSource(read: () => Iterable<BufferedMetricUpdate>): void {
  source = read;
}

/** Takes what the SDK buffered since the last call into the store (the runtime also calls this every second). */
export function drainTemporalMetrics(): void {
  if (!source) return;
  for (const update of source()) record(update);
}

/** The store in Prometheus text, after draining (empty before the process has started a worker). */
export async function temporalMetricsText(): Promise<string> {
  drainTemporalMetrics();
  return families.size === 0 ? '' : `${[...families.values()].map(render).join('\n\n')}\n`;
}

const sanitize = (name: string) => name.replace(/[^a-zA-Z0-9_]/g, '_').replace(/^(?=\d)/, '_');

function familyOf(update: BufferedMetricUpdate): Family {
  const { metric } = update;
  const seconds = metric.kind === 'histogram' && metric.unit === 's';
  const type: Kind = metric.kind === 'up-down-counter' ? 'gauge' : metric.kind;
  const name = sanitize(metric.name) + (type === 'counter' ? '_total' : seconds ? '_seconds' : '');
  let family = families.get(name);
  if (!family) {
    family = {
      name,
      help: metric.description || metric.name,
      type,
      bounds: seconds ? SECONDS_BOUNDS : OTHER_BOUNDS,
      series: new Map(),
    };
    families.set(name, family);
  }
  return family;
}

function record(update: BufferedMetricUpdate): void {
  const family = familyOf(update);
  const labels: Record<string, string> = {};
  for (const [key, value] of Object.entries(update.attributes)) labels[sanitize(key)] = String(value);
  const key = JSON.stringify(Object.entries(labels).sort(([a], [b]) => (a < b ? -1 : 1)));
  let series = family.series.get(key);
  if (!series) {
    series = {
      labels,
      value: 0,
      ...(family.type === 'histogram' ? { counts: family.bounds.map(() => 0), sum: 0 } : {}),
    };
    family.series.set(key, series);
  }
  const kind = update.metric.kind;
  if (kind === 'gauge') series.value = update.value;
  else if (kind === 'counter' || kind === 'up-down-counter') series.value += update.value;
  else observe(family, series, update.value);
}

function observe(family: Family, series: Series, value: number): void {
  series.value += 1;
  series.sum = (series.sum ?? 0) + value;
  const at = family.bounds.findIndex((bound) => value <= bound);
  if (at >= 0) series.counts![at]! += 1;
}

/*
 * One family in the text format, written as prom-client's Registry writes a metric (lib/registry.js): the
 * store is its own exposition, since prom-client types a registered metric as one of its own classes, none
 * of which takes pre-aggregated histogram buckets.
 */
const escapeText = (s: string) => s.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
const labelValue = (v: string | number) => (typeof v === 'string' ? escapeText(v).replace(/"/g, '\\"') : v);
const sampleValue = (v: number) => (Number.isNaN(v) ? 'Nan' : !Number.isFinite(v) ? (v < 0 ? '-Inf' : '+Inf') : `${v}`);

function render(family: Family): string {
  const name = escapeText(family.name);
  const lines = [`# HELP ${name} ${escapeText(family.help)}`, `# TYPE ${name} ${family.type}`];
  for (const { metricName = name, labels, value } of valuesOf(family)) {
    const pairs = Object.entries(labels).map(([k, v]) => `${k}="${labelValue(v)}"`);
    lines.push(`${metricName}${pairs.length > 0 ? `{${pairs.join(',')}}` : ''} ${sampleValue(value)}`);
  }
  return lines.join('\n');
}

function valuesOf(family: Family) {
  const values: { labels: Record<string, string | number>; value: number; metricName?: string }[] = [];
  for (const s of family.series.values()) {
    if (family.type !== 'histogram') {
      values.push({ labels: s.labels, value: s.value });
      continue;
    }
    let cumulative = 0;
    family.bounds.forEach((bound, i) => {
      cumulative += s.counts![i]!;
      values.push({ labels: { ...s.labels, le: bound }, value: cumulative, metricName: `${family.name}_bucket` });
    });
    values.push({ labels: { ...s.labels, le: '+Inf' }, value: s.value, metricName: `${family.name}_bucket` });
    values.push({ labels: s.labels, value: s.sum ?? 0, metricName: `${family.name}_sum` });
    values.push({ labels: s.labels, value: s.value, metricName: `${family.name}_count` });
  }
  return values;
}
