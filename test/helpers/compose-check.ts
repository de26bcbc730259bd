import { execFileSync, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * test/tools/compose-check: Docker Compose's own loader (compose-go, pinned in its go.mod) as a small binary,
 * so that docker-compose.yml is parsed, interpolated, schema-validated and normalised exactly as
 * `docker compose config` would, with no Docker engine. .ci/run builds it into the per-user cache; when it is
 * missing and Go is installed, the first test that needs it builds it there (about 30 s, once).
 */
export const repoRoot = path.resolve(import.meta.dirname, '../..');
const toolDir = path.join(repoRoot, 'test/tools/compose-check');

/** compose-go's pinned version and a digest of the tool's files: a change to either builds afresh. */
export function composeCheckStamp(): string {
  const files = ['main.go', 'go.mod', 'go.sum'].map((f) => fs.readFileSync(path.join(toolDir, f)));
  const version = /github\.com\/compose-spec\/compose-go\/v2 (v[\d.]+)/.exec(files[1]!.toString())?.[1];
  if (!version) throw new Error('test/tools/compose-check/go.mod pins no compose-go version');
  const digest = crypto.createHash('sha256');
  for (const f of files) digest.update(f);
  return `${version}-${digest.digest('hex').slice(0, 12)}`;
}

export function composeCheckBin(): string {
  if (process.env.COMPOSE_CHECK_BIN) return process.env.COMPOSE_CHECK_BIN;
  const cache = process.env.XDG_CACHE_HOME ?? path.join(os.homedir(), '.cache');
  const bin = path.join(cache, 'mailer', `compose-check-${composeCheckStamp()}`, 'compose-check');
  if (!fs.existsSync(bin)) build(bin);
  return bin;
}

function build(bin: string): void {
  fs.mkdirSync(path.dirname(bin), { recursive: true });
  // Test files run in parallel: each builds to a file of its own and renames it into place (atomic).
  const tmp = `${bin}.${process.pid}.tmp`;
  const run = spawnSync('go', ['build', '-o', tmp, '.'], { cwd: toolDir, encoding: 'utf8', timeout: 300_000 });
  if (run.error || run.status !== 0) {
    throw new Error(
      `building test/tools/compose-check failed (Go and the Go module proxy are needed once; .ci/run does it):\n${run.error?.message ?? ''}${run.stderr}`,
    );
  }
  fs.renameSync(tmp, bin);
}

export interface ComposeResult {
  ok: boolean;
  /** The normalised project (`docker compose config --format json`'s shape) when ok. */
  project: ComposeProject;
  stderr: string;
}

export interface ComposeService {
  image?: string;
  build?: { context: string; dockerfile: string };
  deploy?: { replicas?: number };
  profiles?: string[];
  environment?: Record<string, string | null>;
  healthcheck?: { test?: string[]; disable?: boolean; interval?: string; timeout?: string; retries?: number };
  depends_on?: Record<string, { condition: string; required: boolean }>;
  ports?: { host_ip?: string; target: number; published: string; protocol: string }[];
  expose?: string[];
  volumes?: { type: string; source: string; target: string; read_only?: boolean }[];
  entrypoint?: string[] | null;
  command?: string[] | null;
}

export interface ComposeProject {
  name: string;
  services: Record<string, ComposeService>;
  volumes?: Record<string, unknown>;
}

/** Loads docker-compose.yml as compose would, with exactly `env` as the environment (no .env file read). */
export function loadCompose(env: Record<string, string>, profiles: string[] = []): ComposeResult {
  const run = spawnSync(composeCheckBin(), ['compose', path.join(repoRoot, 'docker-compose.yml'), ...profiles], {
    cwd: repoRoot,
    env: { PATH: process.env.PATH ?? '', ...env },
    encoding: 'utf8',
  });
  return {
    ok: run.status === 0,
    project: run.status === 0 ? (JSON.parse(run.stdout) as ComposeProject) : ({} as ComposeProject),
    stderr: run.stderr,
  };
}

/** Any YAML file of the repository, as JSON (compose-go's YAML parser). */
export function loadYaml(relativePath: string): unknown {
  return JSON.parse(execFileSync(composeCheckBin(), ['yaml', path.join(repoRoot, relativePath)], { encoding: 'utf8' }));
}
