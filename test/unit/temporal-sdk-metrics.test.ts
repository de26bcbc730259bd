import type { BufferedMetricUpdate } from '@temporalio/worker';
import { describe, expect, it } from 'vitest';
import { setTemporalMetricsSource, temporalMetricsText } from '../../src/metrics/temporal-sdk-metrics.js';
import { parseExposition } from '../helpers/prometheus.js';

/** The seam: what the SDK's MetricsBuffer would hand over since the last drain. */
let pending: BufferedMetricUpdate[] = [];
setTemporalMetricsSource(() => {
  const out = pending;
  pending = [];
  return out;
});

const metric = (name: string, kind: BufferedMetricUpdate['metric']['kind'], unit = '', description = `${name} help`) =>
  ({ name, kind, unit, description, valueType: 'int' }) as BufferedMetricUpdate['metric'];
const update = (
  m: BufferedMetricUpdate['metric'],
  value: number,
  attributes: Record<string, string | number | boolean> = {},
): BufferedMetricUpdate => ({ metric: m, value, attributes }) as BufferedMetricUpdate;

describe('the Temporal SDK metrics in Prometheus text', () => {
  it('is empty before anything was buffered', async () => {
    expect(await temporalMetricsText()).toBe('');
  });

  it('adds counter deltas under a _total name, keeps the last gauge value, sums up-down counters, per label set', async () => {
    const requests = metric('temporal_request', 'counter', '', 'Count of client request successes by rpc name');
    const slots = metric('temporal_worker_task_slots_available', 'gauge');
    const cached = metric('temporal_sticky_cache_size', 'up-down-counter');
    pending = [
      update(requests, 2, { operation: 'StartWorkflowExecution', namespace: 'default' }),
      update(requests, 3, { namespace: 'default', operation: 'StartWorkflowExecution' }),
      update(requests, 1, { operation: 'PollWorkflowTaskQueue' }),
      update(slots, 40, { worker_type: 'ActivityWorker', task_queue: 'q' }),
      update(slots, 37, { worker_type: 'ActivityWorker', task_queue: 'q' }),
      update(cached, 5),
      update(cached, -2),
    ];
    const s = parseExposition(await temporalMetricsText());
    expect(s.types.get('temporal_request_total')).toBe('counter');
    expect(s.sum('temporal_request_total', { operation: 'StartWorkflowExecution', namespace: 'default' })).toBe(5);
    expect(s.sum('temporal_request_total', { operation: 'PollWorkflowTaskQueue' })).toBe(1);
    expect(s.samples.filter((x) => x.name === 'temporal_request_total')).toHaveLength(2);
    expect(s.text).toContain('# HELP temporal_request_total Count of client request successes by rpc name');
    expect(s.sum('temporal_worker_task_slots_available', { worker_type: 'ActivityWorker' })).toBe(37);
    expect(s.types.get('temporal_sticky_cache_size')).toBe('gauge');
    expect(s.sum('temporal_sticky_cache_size')).toBe(3);

    // Counters keep counting across drains.
    pending = [update(requests, 4, { operation: 'PollWorkflowTaskQueue' })];
    expect(
      parseExposition(await temporalMetricsText()).sum('temporal_request_total', {
        operation: 'PollWorkflowTaskQueue',
      }),
    ).toBe(5);
  });

  it('makes duration histograms (unit s) _seconds histograms with cumulative buckets, a sum and a count', async () => {
    const latency = metric('temporal_activity_execution_latency', 'histogram', 's');
    pending = [0.003, 0.2, 0.2, 7, 120].map((v) => update(latency, v, { activity_type: 'deliverEmails' }));
    const s = parseExposition(await temporalMetricsText());
    const name = 'temporal_activity_execution_latency_seconds';
    expect(s.types.get(name)).toBe('histogram');
    const bucket = (le: string) => s.sum(`${name}_bucket`, { activity_type: 'deliverEmails', le });
    expect([bucket('0.001'), bucket('0.005'), bucket('0.25'), bucket('10'), bucket('60'), bucket('+Inf')]).toEqual([
      0, 1, 3, 4, 4, 5,
    ]);
    expect(s.sum(`${name}_count`)).toBe(5);
    expect(s.sum(`${name}_sum`)).toBeCloseTo(127.403, 6);
  });

  it('turns names and label names Prometheus refuses into ones it takes, and escapes label values', async () => {
    pending = [update(metric('temporal.custom-metric', 'counter'), 1, { 'task-queue': 'a "quoted" \\ queue' })];
    const s = parseExposition(await temporalMetricsText());
    expect(s.sum('temporal_custom_metric_total', { task_queue: 'a "quoted" \\ queue' })).toBe(1);
  });
});
