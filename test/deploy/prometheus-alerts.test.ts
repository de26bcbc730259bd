import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { HEALTH_POLICY } from '../../src/domain/health.js';
import { loadCompose, loadYaml, repoRoot } from '../helpers/compose-check.js';
import { goTool } from '../helpers/go-tools.js';
import { metricNamesIn } from '../helpers/grafana-dashboard.js';
import { scrape } from '../helpers/prometheus.js';
import { useStack } from '../helpers/use-stack.js';

/**
 * deploy/prometheus/alerts.yml: valid rules (`promtool check rules`), each firing and staying quiet as its unit
 * tests say (`promtool test rules alerts.test.yml`), loaded by the compose stack's Prometheus, with the account
 * health policy's thresholds, and naming only metrics the running service exposes.
 */
interface Rule {
  alert: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}
interface RuleTest {
  alert_rule_test?: { alertname: string; exp_alerts?: unknown[] }[];
}

const ALERTS = 'deploy/prometheus/alerts.yml';
const ALERT_TESTS = 'deploy/prometheus/alerts.test.yml';
const rules = (loadYaml(ALERTS) as { groups: { rules: Rule[] }[] }).groups.flatMap((g) => g.rules);
const ruleNamed = (name: string) => rules.find((r) => r.alert === name)!;

function promtool(...args: string[]) {
  const run = spawnSync(goTool('promtool'), args, { cwd: repoRoot, encoding: 'utf8', timeout: 120_000 });
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

describe('the alerting rules, offline', () => {
  it('pass promtool check rules', () => {
    const run = promtool('check', 'rules', ALERTS);
    expect(run.output).toContain(`SUCCESS: ${rules.length} rules found`);
    expect(run.status, run.output).toBe(0);
  }, 900_000);

  it('pass their unit tests (promtool test rules)', () => {
    const run = promtool('test', 'rules', ALERT_TESTS);
    expect(run.status, run.output).toBe(0);
    expect(run.output).toContain('SUCCESS');
  }, 900_000);

  it('are each unit-tested firing and quiet', () => {
    const cases = (loadYaml(ALERT_TESTS) as { tests: RuleTest[] }).tests.flatMap((t) => t.alert_rule_test ?? []);
    for (const { alert } of rules) {
      const own = cases.filter((c) => c.alertname === alert);
      expect(
        own.some((c) => (c.exp_alerts ?? []).length > 0),
        `${alert} fires in a test`,
      ).toBe(true);
      expect(
        own.some((c) => (c.exp_alerts ?? []).length === 0),
        `${alert} stays quiet in a test`,
      ).toBe(true);
    }
  });

  it('each wait a while, carry a severity, a summary, a description and a runbook line', () => {
    expect(rules.map((r) => r.alert)).toEqual(
      expect.arrayContaining([
        'MailerDeliveryQueueStalled',
        'MailerDeliveryFailureRateHigh',
        'MailerBounceRateHigh',
        'MailerComplaintRateHigh',
        'MailerWebhookEventsDiscarded',
        'MailerDomainsDnsFailing',
      ]),
    );
    expect(new Set(rules.map((r) => r.alert)).size).toBe(rules.length);
    for (const r of rules) {
      expect(r.for, r.alert).toMatch(/^\d+[smh]$/);
      expect(['critical', 'warning', 'info'], r.alert).toContain(r.labels?.severity);
      for (const a of ['summary', 'description', 'runbook']) expect(r.annotations?.[a], `${r.alert} ${a}`).toBeTruthy();
      expect(r.annotations!.runbook, r.alert).toContain('docs/operations.md#alerts');
    }
  });

  it("judge bounce and complaint rates at the account health policy's thresholds and minimum volume", () => {
    const bounce = ruleNamed('MailerBounceRateHigh').expr;
    expect(bounce).toContain(`>= ${HEALTH_POLICY.bounceRate}\n`);
    expect(bounce).toMatch(new RegExp(`>= ${HEALTH_POLICY.minVolume}\\s*$`));
    // Suppressed bounces were never handed to a mail server: health leaves them out, and so does the alert.
    expect(bounce).toContain('subtype!="Suppressed"');
    const complaint = ruleNamed('MailerComplaintRateHigh').expr;
    expect(complaint).toContain(`>= ${HEALTH_POLICY.complaintRate}\n`);
    expect(complaint).toMatch(new RegExp(`>= ${HEALTH_POLICY.minVolume}\\s*$`));
  });

  it("are loaded by the compose stack's Prometheus: mounted beside prometheus.yml, which names them", () => {
    const { project, stderr } = loadCompose(
      {
        POSTGRES_PASSWORD: 'p',
        TEMPORAL_DB_PASSWORD: 't',
        MAILER_ADMIN_TOKEN: 'a'.repeat(40),
        MAILER_ENCRYPTION_KEY: '0123456789abcdef'.repeat(4),
      },
      ['observability'],
    );
    expect(stderr).toBe('');
    const binds = new Map(
      (project.services.prometheus!.volumes ?? [])
        .filter((v) => v.type === 'bind')
        .map((v) => [v.target, path.relative(repoRoot, v.source)]),
    );
    expect(binds.get('/etc/prometheus/prometheus.yml')).toBe('deploy/prometheus/prometheus.yml');
    const config = loadYaml('deploy/prometheus/prometheus.yml') as { rule_files?: string[] };
    expect(config.rule_files).toEqual(['alerts.yml']);
    expect(binds.get(path.posix.join('/etc/prometheus', config.rule_files![0]!))).toBe(ALERTS);

    // promtool check config reads the rule files too; the token file compose writes is made here.
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mailer-prometheus-'));
    try {
      const token = path.join(dir, 'metrics-token');
      fs.writeFileSync(token, '');
      const text = fs.readFileSync(path.join(repoRoot, 'deploy/prometheus/prometheus.yml'), 'utf8');
      expect(text).toContain('/prometheus/metrics-token');
      fs.writeFileSync(path.join(dir, 'prometheus.yml'), text.replaceAll('/prometheus/metrics-token', token));
      fs.copyFileSync(path.join(repoRoot, ALERTS), path.join(dir, 'alerts.yml'));
      const run = promtool('check', 'config', path.join(dir, 'prometheus.yml'));
      expect(run.status, run.output).toBe(0);
      expect(run.output).toContain(`SUCCESS: ${rules.length} rules found`);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 300_000);
});

describe('the alerting rules against a running service', () => {
  const stack = useStack();
  let families: Set<string>;
  beforeAll(async () => {
    families = new Set((await scrape(stack.mailer.restUrl!)).types.keys());
  });

  it('name only metrics its /metrics exposes, so that a renamed metric fails here', () => {
    const used = [...new Set(rules.flatMap((r) => metricNamesIn(r.expr)))].sort();
    // The extraction found the rules' metrics (an empty list would make this check vacuous).
    expect(used).toEqual(
      expect.arrayContaining([
        'mailer_delivery_queue_oldest_age_seconds',
        'mailer_deliveries_total',
        'mailer_bounces_total',
        'mailer_complaints_total',
        'mailer_webhook_discards_total',
        'mailer_domains_dns_failing',
      ]),
    );
    // Declared families (# TYPE), as a counter with labels has no sample until it is first counted.
    expect(used.filter((name) => !families.has(name))).toEqual([]);
  });
});
