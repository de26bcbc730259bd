import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * The Go command-line tools the tests drive (the Helm chart's checks, the alerting rules' checks, the generated
 * Go client and gRPC reflection), each pinned to one release. Each is built once with `go install <pkg>@<version>`
 * into a folder of its own in the per-user cache (a new pin builds afresh); .ci/run builds them all up front,
 * and a test that finds its tool missing builds it then (Go and the Go module proxy are needed once).
 * `go install pkg@version` builds with the tool's own go.mod, so the tools' dependency graphs never meet.
 */
export const GO_TOOLS = {
  /** Renders the chart (deploy/helm/mailer) and lints it. */
  helm: 'helm.sh/helm/v3/cmd/helm@v3.22.0',
  /** Validates rendered manifests against the Kubernetes API's schemas. */
  kubeconform: 'github.com/yannh/kubeconform/cmd/kubeconform@v0.8.0',
  /** `promtool check rules` and `promtool test rules` for deploy/prometheus. */
  promtool: 'github.com/prometheus/prometheus/cmd/promtool@v0.316.0',
  /** buf's local plugins for the generated Go client. */
  'protoc-gen-go': 'google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.12',
  'protoc-gen-connect-go': 'connectrpc.com/connect/cmd/protoc-gen-connect-go@v1.21.1',
  /** A gRPC client that knows no proto file: proves server reflection. */
  grpcurl: 'github.com/fullstorydev/grpcurl/cmd/grpcurl@v1.9.4',
} as const;

export type GoToolName = keyof typeof GO_TOOLS;

function cacheDir(): string {
  return path.join(process.env.XDG_CACHE_HOME ?? path.join(os.homedir(), '.cache'), 'mailer', 'go-tools');
}

/** The folder a pinned tool is installed in: named by its pin, so another version never shadows it. */
function toolDir(name: GoToolName): string {
  return path.join(cacheDir(), `${name}-${GO_TOOLS[name].split('@')[1]}`);
}

/** The path of a pinned tool's binary, built first when missing (minutes for helm and promtool). */
export function goTool(name: GoToolName): string {
  const dir = toolDir(name);
  const bin = path.join(dir, name);
  if (fs.existsSync(bin)) return bin;
  // Test files run in parallel: each builds into a folder of its own and renames the binary into place.
  fs.mkdirSync(cacheDir(), { recursive: true });
  const tmp = fs.mkdtempSync(path.join(cacheDir(), `.building-${name}-`));
  const run = spawnSync('go', ['install', GO_TOOLS[name]], {
    env: { ...process.env, GOBIN: tmp, GOFLAGS: '-mod=mod' },
    encoding: 'utf8',
    timeout: 900_000,
  });
  if (run.error || run.status !== 0) {
    throw new Error(
      `go install ${GO_TOOLS[name]} failed (Go and the Go module proxy are needed once; .ci/run does it):\n${run.error?.message ?? ''}${run.stderr}`,
    );
  }
  fs.mkdirSync(dir, { recursive: true });
  fs.renameSync(path.join(tmp, name), bin);
  fs.rmSync(tmp, { recursive: true, force: true });
  return bin;
}

/** The folder holding every pinned tool's binary, for PATH (buf finds its local plugins there). */
export function goToolsPath(...names: GoToolName[]): string {
  return names.map((n) => path.dirname(goTool(n))).join(path.delimiter);
}
