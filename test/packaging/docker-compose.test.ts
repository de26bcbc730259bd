import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * No Docker engine runs where the tests do, so docker-compose.yml is checked as text: nothing it publishes
 * listens beyond loopback unless the operator says so, no secret has a default, and every variable it reads
 * is documented in .env.example. When PyYAML is installed the file is also parsed for real.
 */
const root = path.resolve(import.meta.dirname, '../..');
const compose = fs.readFileSync(path.join(root, 'docker-compose.yml'), 'utf8');
const envExample = fs.readFileSync(path.join(root, '.env.example'), 'utf8');
const initScript = fs.readFileSync(path.join(root, 'docker/postgres-init.sh'), 'utf8');

const LOOPBACK_HOSTS = ['127.0.0.1', '${MAILER_BIND_ADDRESS:-127.0.0.1}'];
// `- "host:published:container"` or `- published:container` entries (volumes end in a path or `:ro`).
const PORT_ENTRY = /^\s*-\s*"?([^"\s#]*\d+:\d+)"?\s*(?:#.*)?$/;
// `${NAME}`, `${NAME:-default}`, `${NAME:?message}`; `$$` escapes a literal dollar for the container.
const VARIABLE = /(?<!\$)\$\{([A-Z_][A-Z0-9_]*)(?:(:?[-?])([^}]*))?\}/g;
const SECRET_KEY = /^\s*([A-Z_]*(?:PASSWORD|PWD|TOKEN|SECRET|ENCRYPTION_KEY)[A-Z_]*):\s*(.*)$/;

const variables = [...compose.matchAll(VARIABLE)].map((m) => ({ name: m[1]!, op: m[2], value: m[3] }));
const documented = new Set([...envExample.matchAll(/^([A-Z_][A-Z0-9_]*)=/gm)].map((m) => m[1]!));

describe('docker-compose.yml', () => {
  it('publishes every port on loopback (or on MAILER_BIND_ADDRESS, whose default is loopback)', () => {
    const ports = compose
      .split('\n')
      .map((line) => PORT_ENTRY.exec(line)?.[1])
      .filter((p): p is string => p !== undefined);
    expect(ports.length).toBeGreaterThanOrEqual(4);
    for (const port of ports) {
      const host = port.slice(0, port.lastIndexOf(':', port.lastIndexOf(':') - 1));
      expect(LOOPBACK_HOSTS, `port ${port}`).toContain(host);
    }
  });

  it('gives no secret a default: each is a required variable', () => {
    const secrets = compose
      .split('\n')
      .map((line) => SECRET_KEY.exec(line))
      .filter((m) => m !== null);
    expect(secrets.map((m) => m[1])).toEqual(
      expect.arrayContaining([
        'POSTGRES_PASSWORD',
        'POSTGRES_PWD',
        'MAILER_ADMIN_TOKEN',
        'MAILER_ENCRYPTION_KEY',
        'TEMPORAL_DB_PASSWORD',
      ]),
    );
    for (const [, key, value] of secrets) {
      // The metrics token is optional by design: unset, /metrics is open (documented).
      if (key === 'MAILER_METRICS_TOKEN') {
        expect(value).toBe('${MAILER_METRICS_TOKEN:-}');
        continue;
      }
      expect(value, key).toMatch(/^\$\{[A-Z_]+:\?[^}]+\}$/);
    }
    const databaseUrl = /DATABASE_URL:\s*postgres:\/\/[^:]+:([^@]+)@/.exec(compose);
    expect(databaseUrl?.[1]).toMatch(/^\$\{POSTGRES_PASSWORD:\?[^}]+\}$/);
    for (const v of variables.filter((x) => x.op === ':-' && /PASSWORD|PWD|TOKEN|SECRET|ENCRYPTION_KEY/.test(x.name))) {
      expect(v.value, `${v.name} has a default`).toBe('');
    }
  });

  it('reads only variables that .env.example documents, with the required ones left empty there', () => {
    expect(variables.length).toBeGreaterThan(0);
    for (const v of variables) expect(documented, `${v.name} is not in .env.example`).toContain(v.name);
    for (const v of variables.filter((x) => x.op === ':?')) {
      expect(envExample, `${v.name} must have no value in .env.example`).toMatch(new RegExp(`^${v.name}=$`, 'm'));
    }
    // And nothing documented is unused.
    for (const name of documented)
      expect(
        variables.map((v) => v.name),
        `${name} is documented but unused`,
      ).toContain(name);
  });

  it("creates Temporal's database role with the password from the environment", () => {
    expect(compose).toContain('./docker/postgres-init.sh:/docker-entrypoint-initdb.d/');
    expect(initScript).toContain('temporal_password="$TEMPORAL_DB_PASSWORD"');
    expect(initScript).toMatch(/PASSWORD :'temporal_password'/);
    expect(initScript).not.toMatch(/PASSWORD\s+'/);
  });

  const hasPyYaml = spawnSync('python3', ['-c', 'import yaml'], { stdio: 'ignore' }).status === 0;
  it.skipIf(!hasPyYaml)('parses as YAML, with the same published ports (PyYAML)', () => {
    const script =
      'import json, sys, yaml; d = yaml.safe_load(sys.stdin); print(json.dumps({k: v.get("ports", []) for k, v in d["services"].items()}))';
    const run = spawnSync('python3', ['-c', script], { input: compose, encoding: 'utf8' });
    expect(run.stderr).toBe('');
    const ports = JSON.parse(run.stdout) as Record<string, string[]>;
    expect(Object.keys(ports)).toEqual(
      expect.arrayContaining(['postgres', 'temporal', 'temporal-ui', 'mailpit', 'api', 'worker']),
    );
    expect(ports.postgres).toEqual([]);
    expect(ports.temporal).toEqual([]);
    for (const port of Object.values(ports).flat())
      expect(
        LOOPBACK_HOSTS.some((h) => port.startsWith(`${h}:`)),
        port,
      ).toBe(true);
  });
});
