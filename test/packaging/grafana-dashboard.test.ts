import { describe, expect, it } from 'vitest';
import { exprsOf, loadDashboard, metricNamesIn, panelsOf } from '../helpers/grafana-dashboard.js';

/**
 * deploy/grafana/mailer-dashboard.json as Grafana imports it. That every metric it queries exists is
 * checked against a live scrape in test/integration/metrics.test.ts; this checks the file itself and the
 * extraction that check relies on.
 */
describe('the metric names of a PromQL expression', () => {
  it.each([
    ['sum by (outcome) (rate(mailer_deliveries_total{job=~"$job"}[$__rate_interval]))', ['mailer_deliveries_total']],
    [
      'histogram_quantile(0.99, sum by (le, route) (rate(mailer_http_request_duration_seconds_bucket{job=~"$job",route!="x_total"}[5m])))',
      ['mailer_http_request_duration_seconds_bucket'],
    ],
    [
      'sum(increase(a_total{subtype="General"}[1h])) / clamp_min(sum(increase(b_total[1h])), 1e-9)',
      ['a_total', 'b_total'],
    ],
    [
      'max(mailer_delivery_queue_oldest_age_seconds) or on (job) vector(0)',
      ['mailer_delivery_queue_oldest_age_seconds'],
    ],
    ['rate(x_total[5m] offset 1h) > bool 0 and ignoring (le) y', ['x_total', 'y']],
  ])('%s', (expr, names) => {
    expect(metricNamesIn(expr).sort()).toEqual(names);
  });
});

describe('the Grafana dashboard', () => {
  const dashboard = loadDashboard();
  const panels = panelsOf(dashboard);
  const charts = panels.filter((p) => p.type !== 'row');

  it('has a fixed uid, a Prometheus data source variable and unique panel ids', () => {
    expect(dashboard.uid).toBe('mailer-overview');
    expect(dashboard.templating.list.find((v) => v.name === 'datasource')).toMatchObject({
      type: 'datasource',
      query: 'prometheus',
    });
    expect(new Set(panels.map((p) => p.id)).size).toBe(panels.length);
  });

  it('gives every chart a title, a description and queries on the chosen data source, inside the 24-column grid', () => {
    for (const p of charts) {
      const panel = p as typeof p & {
        description?: string;
        datasource?: { uid: string };
        gridPos: { x: number; w: number };
      };
      expect(panel.title, `panel ${p.id}`).not.toBe('');
      expect(panel.description, panel.title).toBeTruthy();
      expect(panel.datasource?.uid, panel.title).toBe('${datasource}');
      expect(panel.targets?.length, panel.title).toBeGreaterThan(0);
      expect(panel.gridPos.x + panel.gridPos.w, panel.title).toBeLessThanOrEqual(24);
      for (const t of panel.targets ?? []) expect(t.expr, panel.title).toMatch(/\{job=~"\$job"/);
    }
  });

  it('covers what an operator watches', () => {
    const names = new Set(exprsOf(dashboard).flatMap(metricNamesIn));
    for (const name of [
      'mailer_delivery_queue_depth',
      'mailer_delivery_queue_oldest_age_seconds',
      'mailer_deliveries_total',
      'mailer_bounces_total',
      'mailer_complaints_total',
      'mailer_webhook_attempts_total',
      'mailer_webhook_post_duration_seconds_bucket',
      'mailer_webhook_event_latency_seconds_bucket',
      'mailer_scheduled_lateness_seconds_bucket',
      'mailer_http_requests_total',
      'mailer_http_request_duration_seconds_bucket',
      'mailer_rpc_requests_total',
      'mailer_rpc_request_duration_seconds_bucket',
      'mailer_process_cpu_seconds_total',
      'mailer_process_resident_memory_bytes',
      'temporal_workflow_task_schedule_to_start_latency_seconds_bucket',
    ])
      expect(names, name).toContain(name);
  });
});
