import fs from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { describeConfig, loadConfig } from '../../src/config.js';
import { loadCompose, repoRoot, type ComposeProject, type ComposeService } from '../helpers/compose-check.js';

/**
 * docker-compose.yml as Docker Compose itself loads it (compose-go, test/helpers/compose-check.ts): required
 * variables, the services and their replicas, health checks, the depends_on graph, published ports, and the
 * settings it gives the service, read by src/config.ts. The proxy, Prometheus and Grafana configurations are
 * checked against it in deploy-configs.test.ts.
 */
const REQUIRED = {
  POSTGRES_PASSWORD: 'pg-password',
  TEMPORAL_DB_PASSWORD: 'temporal-password',
  MAILER_ADMIN_TOKEN: 'a'.repeat(40),
  MAILER_ENCRYPTION_KEY: '0123456789abcdef'.repeat(4),
};
const MAILER_SERVICES = ['api', 'worker'];
const DEFAULT_SERVICES = ['postgres', 'temporal', 'temporal-ui', 'mailpit', 'api', 'worker', 'proxy'];
const OBSERVABILITY = ['prometheus', 'grafana'];

let project: ComposeProject;
let services: Record<string, ComposeService>;
beforeAll(() => {
  const loaded = loadCompose(REQUIRED, ['observability']);
  expect(loaded.stderr).toBe('');
  project = loaded.project;
  services = project.services;
}, 300_000);

describe('docker-compose.yml, as compose loads it', () => {
  it('refuses to load while any required secret is missing, naming it', () => {
    for (const name of Object.keys(REQUIRED)) {
      const env: Record<string, string> = { ...REQUIRED };
      delete env[name];
      const result = loadCompose(env);
      expect(result.ok, `${name} missing`).toBe(false);
      expect(result.stderr).toContain(`required variable ${name} is missing a value`);
    }
  });

  it('loads without the observability profile and needs no variable of its own for it', () => {
    const plain = loadCompose(REQUIRED);
    expect(plain.stderr).toBe('');
    expect(Object.keys(plain.project.services).sort()).toEqual([...DEFAULT_SERVICES].sort());
    expect(Object.keys(services).sort()).toEqual([...DEFAULT_SERVICES, ...OBSERVABILITY].sort());
    for (const name of OBSERVABILITY) expect(services[name]!.profiles).toEqual(['observability']);
  });

  it('runs two API and two worker replicas of one image built from this repository, in their roles', () => {
    for (const name of MAILER_SERVICES) {
      const s = services[name]!;
      expect(s.deploy?.replicas, name).toBe(2);
      expect(s.build?.context).toBe(repoRoot);
      expect(s.build?.dockerfile).toBe('Dockerfile');
      expect(s.image).toBe(services.api!.image);
      expect(s.environment?.MAILER_ROLE).toBe(name);
    }
    for (const [name, s] of Object.entries(services)) {
      if (!MAILER_SERVICES.includes(name)) expect(s.deploy?.replicas ?? 1, name).toBe(1);
    }
  });

  it('sets only settings src/config.ts declares, which it reads as the intended roles and ports', () => {
    const declared = new Set(describeConfig().map((s) => s.env));
    for (const name of MAILER_SERVICES) {
      const env = services[name]!.environment ?? {};
      // NODE_OPTIONS is Node's own: the worker's young generation (src/app/worker-process.ts).
      expect(env.NODE_OPTIONS).toBe(name === 'worker' ? '--max-semi-space-size=64' : undefined);
      for (const key of Object.keys(env).filter((k) => k !== 'NODE_OPTIONS'))
        expect(declared, `${name} sets ${key}`).toContain(key);
      // Every MAILER_* the file sets anywhere is one of ours (the image adds HOST, MAILER_DATA_DIR and the bundle).
      const config = loadConfig({ ...(env as Record<string, string>), HOST: '0.0.0.0' });
      expect(config.role).toBe(name);
      expect(config.databaseUrl).toBe(`postgres://mailer:${REQUIRED.POSTGRES_PASSWORD}@postgres:5432/mailer`);
      expect(config.temporalAddress).toBe('temporal:7233');
      expect(config.adminToken).toBe(REQUIRED.MAILER_ADMIN_TOKEN);
      expect(config.encryptionKey).toBe(REQUIRED.MAILER_ENCRYPTION_KEY);
      expect(config.metricsToken).toBeUndefined();
      expect(config.delivery).toBe('relay');
      expect(new URL(config.smtpUrl!).hostname).toBe('mailpit');
    }
    for (const [name, s] of Object.entries(services)) {
      for (const key of Object.keys(s.environment ?? {}).filter((k) => k.startsWith('MAILER_'))) {
        expect(declared, `${name} sets ${key}`).toContain(key);
      }
    }
  });

  it('checks every service with a health check, the API and workers on /readyz of their own ports', () => {
    for (const [name, s] of Object.entries(services)) {
      expect(s.healthcheck?.disable ?? false, name).toBe(false);
      expect(s.healthcheck?.test?.[0], name).toMatch(/^CMD(-SHELL)?$/);
      expect(s.healthcheck?.test?.slice(1).join(' '), name).not.toBe('');
    }
    const api = loadConfig(services.api!.environment as Record<string, string>);
    const worker = loadConfig(services.worker!.environment as Record<string, string>);
    expect(services.api!.healthcheck!.test).toEqual([
      'CMD',
      'node',
      '/app/docker/healthcheck.js',
      `http://127.0.0.1:${api.port}/readyz`,
    ]);
    expect(services.worker!.healthcheck!.test).toEqual([
      'CMD',
      'node',
      '/app/docker/healthcheck.js',
      `http://127.0.0.1:${worker.workerPort}/readyz`,
    ]);
    expect(worker.workerPort).toBe(8082);
  });

  it('starts each service after what it depends on is healthy, with no cycle and no dependency on an optional profile', () => {
    for (const [name, s] of Object.entries(services)) {
      for (const [target, dep] of Object.entries(s.depends_on ?? {})) {
        expect(services[target], `${name} depends on ${target}`).toBeDefined();
        expect(dep.condition, `${name} -> ${target}`).toBe('service_healthy');
        expect(services[target]!.healthcheck?.test, `${target} has a health check`).toBeDefined();
        if (!services[name]!.profiles) expect(services[target]!.profiles, `${name} -> ${target}`).toBeUndefined();
      }
    }
    // Depth-first search for a cycle.
    const state = new Map<string, 'open' | 'done'>();
    const visit = (name: string, trail: string[]): void => {
      if (state.get(name) === 'done') return;
      expect(state.get(name), `cycle: ${[...trail, name].join(' -> ')}`).not.toBe('open');
      state.set(name, 'open');
      for (const target of Object.keys(services[name]!.depends_on ?? {})) visit(target, [...trail, name]);
      state.set(name, 'done');
    };
    for (const name of Object.keys(services)) visit(name, []);
    expect(Object.keys(services.api!.depends_on ?? {}).sort()).toEqual(['postgres', 'temporal']);
    expect(Object.keys(services.worker!.depends_on ?? {}).sort()).toEqual(['mailpit', 'postgres', 'temporal']);
    expect(Object.keys(services.proxy!.depends_on ?? {})).toEqual(['api']);
    expect(Object.keys(services.prometheus!.depends_on ?? {}).sort()).toEqual(['api', 'worker']);
  });

  it('publishes each host port once, on loopback by default, and nothing from a replicated service', () => {
    const wide = loadCompose({ ...REQUIRED, MAILER_BIND_ADDRESS: '0.0.0.0' }, ['observability']);
    expect(wide.stderr).toBe('');
    for (const p of [project, wide.project]) {
      const published = Object.entries(p.services).flatMap(([name, s]) =>
        (s.ports ?? []).map((port) => ({ name, ...port })),
      );
      // Whatever the addresses, a host port is bound once (0.0.0.0 and 127.0.0.1 would collide).
      const keys = published.map((port) => `${port.protocol}/${port.published}`);
      expect(new Set(keys).size, keys.join(', ')).toBe(keys.length);
      for (const port of published)
        expect(port.host_ip, `${port.name} ${port.published}`).toMatch(/^(127\.0\.0\.1|0\.0\.0\.0)$/);
    }
    for (const port of Object.values(services).flatMap((s) => s.ports ?? [])) expect(port.host_ip).toBe('127.0.0.1');
    for (const name of MAILER_SERVICES) expect(services[name]!.ports ?? []).toEqual([]);
    // MAILER_BIND_ADDRESS widens the API's ports only, never the inbound report listener (no AUTH).
    const proxyPorts = (p: ComposeProject) =>
      Object.fromEntries((p.services.proxy!.ports ?? []).map((x) => [x.target, x.host_ip]));
    expect(proxyPorts(wide.project)).toEqual({ 8080: '0.0.0.0', 8081: '0.0.0.0', 2587: '0.0.0.0', 2526: '127.0.0.1' });
  });

  it('gives each listener of a mailer container its own port, and exposes them', () => {
    for (const name of MAILER_SERVICES) {
      const c = loadConfig(services[name]!.environment as Record<string, string>);
      const ports = [c.port, c.grpcPort, c.workerPort, c.inboundPort, c.submissionPort];
      expect(new Set(ports).size, ports.join(', ')).toBe(ports.length);
      const expected = name === 'api' ? [c.port, c.grpcPort, c.inboundPort, c.submissionPort] : [c.workerPort];
      expect((services[name]!.expose ?? []).map(Number).sort()).toEqual(expected.sort());
    }
  });

  it('mounts only files of this repository that exist, read-only', () => {
    const binds = Object.values(services)
      .flatMap((s) => s.volumes ?? [])
      .filter((v) => v.type === 'bind');
    expect(binds.length).toBeGreaterThanOrEqual(4);
    for (const v of binds) {
      expect(path.relative(repoRoot, v.source).startsWith('..'), v.source).toBe(false);
      expect(fs.existsSync(v.source), v.source).toBe(true);
      expect(v.read_only, v.source).toBe(true);
    }
  });
});
