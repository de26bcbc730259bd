import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN_MIN_LENGTH, describeConfig, loadConfig } from '../../src/config.js';
import { parseEncryptionKey } from '../../src/domain/encryption-key-text.js';
import { queueMetrics } from '../../src/metrics/queue-metrics.js';
import { composeCheckBin, repoRoot } from '../helpers/compose-check.js';
import { goTool } from '../helpers/go-tools.js';
import { KUBERNETES_VERSION, kubeSchemaLocation } from '../helpers/kube-schemas.js';

/**
 * deploy/helm/mailer: lints and renders (helm, pinned) with the default values and with values-production.yaml,
 * each render valid against Kubernetes' own schemas and the ServiceMonitor CRD's (kubeconform -strict, schemas made
 * offline by test/helpers/kube-schemas.ts); values.schema.json refuses a misspelt key and a wrong type; and what the
 * Deployments give the service is what src/config.ts reads, secrets from Secrets only.
 */
const CHART = 'deploy/helm/mailer';
const PRODUCTION = `${CHART}/values-production.yaml`;

interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: { secretKeyRef?: { name: string; key: string; optional?: boolean } };
}
interface Container {
  name: string;
  env?: EnvVar[];
  ports?: { name: string; containerPort: number }[];
  readinessProbe?: { httpGet?: { path: string; port: string } };
  livenessProbe?: { httpGet?: { path: string; port: string } };
  startupProbe?: { httpGet?: { path: string; port: string } };
  securityContext?: { readOnlyRootFilesystem?: boolean; allowPrivilegeEscalation?: boolean };
}
interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string> };
  spec?: Record<string, unknown>;
  data?: Record<string, string>;
}
type Deployment = K8sObject & {
  spec: {
    replicas?: number;
    template: { spec: { containers: Container[]; securityContext?: { runAsNonRoot?: boolean } } };
  };
};

let work: string;
beforeAll(() => {
  work = fs.mkdtempSync(path.join(os.tmpdir(), 'helm-chart-'));
});
afterAll(() => fs.rmSync(work, { recursive: true, force: true }));

function helm(...args: string[]) {
  const run = spawnSync(goTool('helm'), args, { cwd: repoRoot, encoding: 'utf8', timeout: 300_000 });
  return { status: run.status, stdout: run.stdout, output: `${run.stdout}${run.stderr}` };
}

function render(...args: string[]): string {
  const run = helm('template', 'mailer', CHART, '--namespace', 'mail', ...args);
  expect(run.status, run.output).toBe(0);
  return run.stdout;
}

/** The rendered documents as objects, read with the same YAML loader (Go's) the compose tests use. */
function parse(manifests: string): K8sObject[] {
  return manifests
    .split(/^---\s*$/m)
    .filter((doc) => /^kind:/m.test(doc))
    .map((doc, i) => {
      const file = path.join(work, `doc-${process.hrtime.bigint()}-${i}.yaml`);
      fs.writeFileSync(file, doc);
      return JSON.parse(execFileSync(composeCheckBin(), ['yaml', file], { encoding: 'utf8' })) as K8sObject;
    });
}

function kubeconform(manifests: string) {
  const run = spawnSync(
    goTool('kubeconform'),
    ['-strict', '-summary', '-kubernetes-version', KUBERNETES_VERSION, '-schema-location', kubeSchemaLocation(), '-'],
    { input: manifests, encoding: 'utf8', timeout: 300_000 },
  );
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

const valuesFile = (name: string, text: string) => {
  const file = path.join(work, name);
  fs.writeFileSync(file, text);
  return file;
};

const byKind = (objects: K8sObject[], kind: string) => objects.filter((o) => o.kind === kind);
const deployments = (objects: K8sObject[]) => byKind(objects, 'Deployment') as Deployment[];
const container = (d: Deployment) => d.spec.template.spec.containers[0]!;

describe('the Helm chart renders and validates', () => {
  for (const [label, args] of [
    ['the default values', [] as string[]],
    ['values-production.yaml', ['-f', PRODUCTION]],
  ] as const) {
    it(`passes helm lint --strict with ${label}`, () => {
      const run = helm('lint', '--strict', CHART, ...args);
      expect(run.status, run.output).toBe(0);
      expect(run.output).toContain('1 chart(s) linted, 0 chart(s) failed');
    }, 900_000);

    it(`renders manifests valid against Kubernetes ${KUBERNETES_VERSION}'s schemas with ${label} (kubeconform -strict)`, () => {
      const manifests = render(...args);
      const count = parse(manifests).length;
      const run = kubeconform(manifests);
      expect(run.status, run.output).toBe(0);
      // Every document checked against a schema: none skipped for want of one.
      expect(run.output).toContain(
        `${count} resources found parsing stdin - Valid: ${count}, Invalid: 0, Errors: 0, Skipped: 0`,
      );
    }, 900_000);
  }

  it('has the default values make a working minimal set: two Deployments, their Services, PDBs and the Secret', () => {
    const objects = parse(render());
    expect(objects.map((o) => `${o.kind}/${o.metadata.name}`).sort()).toEqual([
      'Deployment/mailer-api',
      'Deployment/mailer-worker',
      'PodDisruptionBudget/mailer-api',
      'PodDisruptionBudget/mailer-worker',
      'Secret/mailer-secrets',
      'Service/mailer-api',
      'Service/mailer-worker',
      'ServiceAccount/mailer',
    ]);
  }, 900_000);

  it('has the production values add the autoscalers, the SMTP Service, the Ingress and the ServiceMonitor', () => {
    const objects = parse(render('-f', PRODUCTION));
    const names = objects.map((o) => `${o.kind}/${o.metadata.name}`);
    expect(names).toEqual(
      expect.arrayContaining([
        'HorizontalPodAutoscaler/mailer-api',
        'HorizontalPodAutoscaler/mailer-worker',
        'Service/mailer-smtp',
        'Ingress/mailer',
        'ServiceMonitor/mailer',
      ]),
    );
    // Secrets of the operator's own: the chart makes none.
    expect(byKind(objects, 'Secret')).toEqual([]);
    // Autoscaled Deployments leave the replica count to their HPA.
    for (const d of deployments(objects)) expect(d.spec.replicas).toBeUndefined();
    const smtp = objects.find((o) => o.metadata.name === 'mailer-smtp')!.spec as {
      type: string;
      externalTrafficPolicy: string;
      ports: { name: string; port: number; targetPort: string }[];
    };
    expect(smtp.type).toBe('LoadBalancer');
    expect(smtp.externalTrafficPolicy).toBe('Local');
    expect(smtp.ports.map((p) => [p.name, p.port, p.targetPort])).toEqual([
      ['smtp-inbound', 25, 'smtp-inbound'],
      ['smtp-submission', 587, 'smtp-submission'],
    ]);
  }, 900_000);

  it('is checked by kubeconform for real: a misspelt field or a wrong type in a manifest or the ServiceMonitor fails', () => {
    const manifests = render('-f', PRODUCTION);
    for (const [from, to, error] of [
      ['maxUnavailable: 1', 'maxUnavailabl: 1', "additional properties 'maxUnavailabl' not allowed"],
      ['containerPort: 8081', 'containerPort: "8081"', 'got string, want integer'],
      ['scrapeTimeout:', 'scrapeTimout:', "additional properties 'scrapeTimout' not allowed"],
      ['averageUtilization: 70', 'averageUtilization: "70%"', 'got string, want integer'],
    ] as const) {
      expect(manifests).toContain(from);
      const run = kubeconform(manifests.replace(from, to));
      expect(run.status, `${from} -> ${to}`).not.toBe(0);
      expect(run.output).toContain(error);
    }
  }, 900_000);
});

describe('values.schema.json', () => {
  for (const [label, text, error] of [
    ['a misspelt key', 'api:\n  replica: 3\n', "additional properties 'replica' not allowed"],
    [
      'a misspelt top-level key',
      'servicemonitor:\n  enabled: true\n',
      "additional properties 'servicemonitor' not allowed",
    ],
    ['a wrong type', 'worker:\n  autoscaling:\n    queueAgeSeconds: "30s"\n', 'got string, want integer'],
    ['an unknown delivery mode', 'delivery:\n  mode: smtp\n', "value must be one of 'catcher', 'relay', 'direct'"],
    ['a short admin token', 'secrets:\n  adminToken: short\n', 'minLength'],
    ['a Temporal address without its port', 'temporal:\n  address: temporal-frontend\n', "'/temporal/address'"],
    ['an encryption key of the wrong length', 'secrets:\n  encryptionKey: abcd\n', 'does not match pattern'],
    ['a setting the chart sets itself, in env', 'env:\n  MAILER_ROLE: all\n', "invalid propertyName 'MAILER_ROLE'"],
  ] as const) {
    it(`makes helm template refuse ${label}`, () => {
      const run = helm('template', 'mailer', CHART, '-f', valuesFile(`bad-${label.replace(/\W+/g, '-')}.yaml`, text));
      expect(run.status, run.output).not.toBe(0);
      expect(run.output).toContain("values don't meet the specifications of the schema");
      expect(run.output).toContain(error);
    }, 900_000);
  }

  it('refuses relay delivery without a smart host', () => {
    const run = helm('template', 'mailer', CHART, '--set', 'delivery.mode=relay');
    expect(run.status).not.toBe(0);
    expect(run.output).toContain('delivery.mode relay needs delivery.smtpUrl or delivery.existingSecret');
  }, 900_000);
});

describe("the Deployments' environment is what the service reads", () => {
  const declared = new Set(describeConfig().map((s) => s.env));
  const SECRET_SETTINGS = [
    'DATABASE_URL',
    'MAILER_ADMIN_TOKEN',
    'MAILER_ENCRYPTION_KEY',
    'MAILER_METRICS_TOKEN',
    'SMTP_URL',
  ];

  it('names only settings src/config.ts declares, and every one a production process needs', () => {
    for (const args of [[], ['-f', PRODUCTION]]) {
      for (const d of deployments(parse(render(...args)))) {
        const names = (container(d).env ?? []).map((e) => e.name);
        // NODE_OPTIONS is Node's own: the worker's young generation (values.yaml worker.nodeOptions).
        for (const name of names.filter((n) => n !== 'NODE_OPTIONS'))
          expect(declared, `${d.metadata.name} sets ${name}`).toContain(name);
        const nodeOptions = (container(d).env ?? []).find((e) => e.name === 'NODE_OPTIONS');
        expect(nodeOptions?.value).toBe(d.metadata.name.endsWith('-worker') ? '--max-semi-space-size=64' : undefined);
        expect(new Set(names).size, `${d.metadata.name} sets a variable twice`).toBe(names.length);
        expect(names).toEqual(
          expect.arrayContaining([
            'MAILER_ROLE',
            'HOST',
            'MAILER_DATA_DIR',
            'DATABASE_URL',
            'TEMPORAL_ADDRESS',
            'TEMPORAL_NAMESPACE',
            'TEMPORAL_TASK_QUEUE',
            'MAILER_ADMIN_TOKEN',
            'MAILER_ENCRYPTION_KEY',
            'MAILER_METRICS_TOKEN',
            'MAILER_DELIVERY',
          ]),
        );
      }
    }
  }, 900_000);

  it('takes every secret from a Secret, never from a value in the pod spec', () => {
    for (const args of [
      [],
      ['-f', PRODUCTION],
      ['--set', 'delivery.mode=relay,delivery.smtpUrl=smtp://u:p@relay:587'],
    ]) {
      for (const d of deployments(parse(render(...args)))) {
        for (const e of container(d).env ?? []) {
          if (SECRET_SETTINGS.includes(e.name)) {
            expect(e.value, `${d.metadata.name} ${e.name}`).toBeUndefined();
            expect(e.valueFrom?.secretKeyRef, `${d.metadata.name} ${e.name}`).toBeDefined();
          }
        }
      }
    }
  }, 900_000);

  it("starts the service's configuration: each role's environment, with the chart's Secrets, loads (loadConfig)", () => {
    const objects = parse(
      render(
        '--set',
        'database.url=postgres://mailer:pw@db:5432/mailer,delivery.mode=relay,delivery.smtpUrl=smtp://u:p@relay:587,api.trustedProxies=10.0.0.0/8',
      ),
    );
    const secrets = new Map(byKind(objects, 'Secret').map((s) => [s.metadata.name, s.data ?? {}]));
    const roles: Record<string, string> = {};
    for (const d of deployments(objects)) {
      const env: NodeJS.ProcessEnv = {};
      for (const e of container(d).env ?? []) {
        const ref = e.valueFrom?.secretKeyRef;
        if (ref) {
          const data = secrets.get(ref.name);
          expect(data?.[ref.key], `${e.name}: Secret ${ref.name} key ${ref.key}, made by the chart`).toBeDefined();
          env[e.name] = Buffer.from(data![ref.key]!, 'base64').toString('utf8');
        } else {
          env[e.name] = e.value;
        }
      }
      // Parsed as the service parses it at start: a malformed value (a generated key it cannot open, a port
      // that is not a number, relay without SMTP_URL) throws here.
      const config = loadConfig(env);
      roles[d.metadata.name] = config.role;
      expect(config.databaseUrl).toBe('postgres://mailer:pw@db:5432/mailer');
      expect(config.temporalAddress).toBe('temporal-frontend:7233');
      expect(config.delivery).toBe('relay');
      expect(config.host).toBe('0.0.0.0');
      // The generated secrets are what the service takes.
      expect(config.adminToken!.length).toBeGreaterThanOrEqual(ADMIN_TOKEN_MIN_LENGTH);
      expect(parseEncryptionKey(config.encryptionKey!, 'MAILER_ENCRYPTION_KEY')).toHaveLength(32);
      expect(config.metricsToken).toBeDefined();
      // The ports the process listens on are the container's named ports the probes and Services use.
      const ports = new Map((container(d).ports ?? []).map((p) => [p.name, p.containerPort]));
      if (config.role === 'api') {
        expect(ports.get('http')).toBe(config.port);
        expect(ports.get('grpc')).toBe(config.grpcPort);
        expect(ports.get('smtp-inbound')).toBe(config.inboundPort);
        expect(ports.get('smtp-submission')).toBe(config.submissionPort);
        expect(config.trustedProxies).toEqual(['10.0.0.0/8']);
      } else {
        expect(ports.get('http')).toBe(config.workerPort);
      }
    }
    expect(roles).toEqual({ 'mailer-api': 'api', 'mailer-worker': 'worker' });
  }, 900_000);

  it('turns submission off with MAILER_SUBMISSION_PORT=0 when smtp.submission.enabled is false', () => {
    const objects = parse(render('--set', 'smtp.submission.enabled=false,smtp.service.enabled=true'));
    const api = deployments(objects).find((d) => d.metadata.name === 'mailer-api')!;
    expect(container(api).env!.find((e) => e.name === 'MAILER_SUBMISSION_PORT')?.value).toBe('0');
    expect(container(api).ports!.map((p) => p.name)).not.toContain('smtp-submission');
    const smtp = objects.find((o) => o.metadata.name === 'mailer-smtp')!.spec as { ports: { name: string }[] };
    expect(smtp.ports.map((p) => p.name)).toEqual(['smtp-inbound']);
  }, 900_000);

  it('probes /healthz and /readyz on each role’s own HTTP port, non-root on a read-only root file system', () => {
    for (const d of deployments(parse(render('-f', PRODUCTION)))) {
      const c = container(d);
      expect(c.livenessProbe?.httpGet).toEqual({ path: '/healthz', port: 'http' });
      expect(c.startupProbe?.httpGet).toEqual({ path: '/healthz', port: 'http' });
      expect(c.readinessProbe?.httpGet).toEqual({ path: '/readyz', port: 'http' });
      expect(c.securityContext).toMatchObject({ readOnlyRootFilesystem: true, allowPrivilegeEscalation: false });
      expect(d.spec.template.spec.securityContext?.runAsNonRoot).toBe(true);
    }
  }, 900_000);

  it('never shows a secret in the release notes', () => {
    // helm template leaves NOTES.txt out: a copy of the chart renders it (tpl, with the chart's own templates)
    // into a ConfigMap of its own.
    const chart = path.join(work, 'chart-copy');
    fs.cpSync(path.join(repoRoot, CHART), chart, { recursive: true });
    fs.copyFileSync(path.join(chart, 'templates/NOTES.txt'), path.join(chart, 'notes.txt'));
    fs.writeFileSync(
      path.join(chart, 'templates/notes-shown.yaml'),
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: notes\ndata:\n  notes: {{ tpl (.Files.Get "notes.txt") . | toJson }}\n',
    );
    const secrets = {
      'secrets.adminToken': 'admin-token-0123456789abcdef0123456789abcdef',
      'secrets.encryptionKey': 'ab'.repeat(32),
      'secrets.metricsToken': 'metrics-token-0123456789',
      'database.url': 'postgres://mailer:db-password-123@db:5432/mailer',
      'delivery.smtpUrl': 'smtp://user:smtp-password-456@relay:587',
    };
    const run = spawnSync(
      goTool('helm'),
      [
        'template',
        'mailer',
        chart,
        '--show-only',
        'templates/notes-shown.yaml',
        '--set',
        `delivery.mode=relay,${Object.entries(secrets)
          .map(([k, v]) => `${k}=${v}`)
          .join(',')}`,
        '--set',
        'worker.autoscaling.enabled=true,smtp.service.enabled=true',
      ],
      { encoding: 'utf8' },
    );
    expect(run.status, run.stderr).toBe(0);
    const notes = (parse(run.stdout)[0]!.data as { notes: string }).notes;
    expect(notes).toContain('kubectl -n default get secret mailer-secrets');
    for (const value of [...Object.values(secrets), 'db-password-123', 'smtp-password-456']) {
      expect(notes).not.toContain(value);
      expect(notes).not.toContain(Buffer.from(value).toString('base64'));
    }
  }, 900_000);
});

describe('the worker autoscaler', () => {
  it('scales on a gauge the service exports: the age of the oldest email in the delivery queue', () => {
    const objects = parse(render('-f', PRODUCTION));
    const hpa = objects.find((o) => o.kind === 'HorizontalPodAutoscaler' && o.metadata.name === 'mailer-worker')!;
    const external = (hpa.spec!.metrics as { type: string; external?: { metric: { name: string } } }[]).find(
      (m) => m.type === 'External',
    )!;
    const name = external.external!.metric.name;
    // The name as src/metrics/queue-metrics.ts registers it, so a renamed gauge breaks this test.
    const registry = new Registry();
    queueMetrics(registry, undefined, () => {});
    expect(registry.getSingleMetric(name), `${name} is registered`).toBeDefined();
    expect(name).toBe('mailer_delivery_queue_oldest_age_seconds');
    // docs/kubernetes.md's prometheus-adapter rule serves that name.
    const docs = fs.readFileSync(path.join(repoRoot, 'docs/kubernetes.md'), 'utf8');
    expect(docs).toContain(`seriesQuery: '${name}`);
  }, 900_000);

  it("has the ServiceMonitor scrape the API and worker Services' http port with the metrics token, not the SMTP Service", () => {
    const objects = parse(render('-f', PRODUCTION));
    const monitor = byKind(objects, 'ServiceMonitor')[0]!.spec as {
      selector: { matchLabels: Record<string, string>; matchExpressions: { key: string; values: string[] }[] };
      endpoints: { port: string; path: string; authorization: { credentials: { name: string; key: string } } }[];
    };
    const selects = (o: K8sObject) =>
      Object.entries(monitor.selector.matchLabels).every(([k, v]) => o.metadata.labels?.[k] === v) &&
      monitor.selector.matchExpressions.every((e) => e.values.includes(o.metadata.labels?.[e.key] ?? ''));
    const services = byKind(objects, 'Service').filter(selects);
    expect(services.map((s) => s.metadata.name).sort()).toEqual(['mailer-api', 'mailer-worker']);
    for (const s of services) {
      expect((s.spec!.ports as { name: string }[]).map((p) => p.name)).toContain(monitor.endpoints[0]!.port);
    }
    expect(monitor.endpoints[0]).toMatchObject({ port: 'http', path: '/metrics' });
    expect(monitor.endpoints[0]!.authorization.credentials).toEqual({
      name: 'mailer-secrets',
      key: 'MAILER_METRICS_TOKEN',
    });
  }, 900_000);
});
