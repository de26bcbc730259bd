import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { composeCheckBin } from './compose-check.js';

/**
 * JSON schemas for kubeconform, made offline from what the Go module proxy serves (kubeconform's default is to
 * download them from GitHub at every run, which this machine and CI cannot reach):
 * - Kubernetes' own kinds from the OpenAPI document in the k8s.io/kubernetes module (api/openapi-spec/swagger.json);
 * - the ServiceMonitor (and the other monitoring.coreos.com kinds) from the CRDs in the prometheus-operator module
 *   (example/prometheus-operator-crd/).
 * Each kind becomes one self-contained file named as kubeconform looks it up (`deployment-apps-v1.json`,
 * `service-v1.json`, `servicemonitor-monitoring-v1.json`), strict as kubectl's validation is: an object with
 * `properties` takes no other key. Built once into the per-user cache (a new pin or converter builds afresh).
 */
export const KUBERNETES_VERSION = '1.34.2';
export const PROMETHEUS_OPERATOR_VERSION = 'v0.85.0';
/** Bump when the conversion changes, so that caches made by an older one are not used. */
const CONVERTER = 2;

type Schema = Record<string, unknown>;

function cacheRoot(): string {
  return path.join(process.env.XDG_CACHE_HOME ?? path.join(os.homedir(), '.cache'), 'mailer', 'kube-schemas');
}

/** The folder of schemas, built first when missing (a download of about 20 MB and a few seconds' work). */
export function kubeSchemasDir(): string {
  const dir = path.join(
    cacheRoot(),
    `k8s-v${KUBERNETES_VERSION}-prometheus-operator-${PROMETHEUS_OPERATOR_VERSION}-c${CONVERTER}`,
  );
  if (fs.existsSync(path.join(dir, 'deployment-apps-v1.json'))) return dir;
  fs.mkdirSync(cacheRoot(), { recursive: true });
  // Test files run in parallel: each builds into a folder of its own and renames it into place.
  const tmp = fs.mkdtempSync(path.join(cacheRoot(), '.building-'));
  writeKubernetesSchemas(
    path.join(goModuleDir('k8s.io/kubernetes', `v${KUBERNETES_VERSION}`), 'api/openapi-spec'),
    tmp,
  );
  const crds = path.join(
    goModuleDir('github.com/prometheus-operator/prometheus-operator', PROMETHEUS_OPERATOR_VERSION),
    'example/prometheus-operator-crd',
  );
  for (const file of fs.readdirSync(crds).filter((f) => f.endsWith('.yaml'))) {
    writeCrdSchemas(path.join(crds, file), tmp);
  }
  try {
    fs.renameSync(tmp, dir);
  } catch (err) {
    // Another test file finished first: its folder is as good as this one.
    if (!fs.existsSync(path.join(dir, 'deployment-apps-v1.json'))) throw err;
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  return dir;
}

/** kubeconform's -schema-location for the folder (its template names the file by kind, group and version). */
export function kubeSchemaLocation(): string {
  return `${kubeSchemasDir()}/{{ .ResourceKind }}{{ .KindSuffix }}.json`;
}

/** A module's files, from the Go module cache (downloaded from the module proxy first when missing). */
function goModuleDir(module: string, version: string): string {
  // Outside any Go module, so that no go.mod of the repository's tools takes part.
  const run = spawnSync('go', ['mod', 'download', '-json', `${module}@${version}`], {
    cwd: os.tmpdir(),
    env: { ...process.env, GOFLAGS: '-mod=mod' },
    encoding: 'utf8',
    timeout: 600_000,
  });
  if (run.error || run.status !== 0) {
    throw new Error(
      `go mod download ${module}@${version} failed (Go and the Go module proxy are needed once):\n${run.error?.message ?? ''}${run.stdout}${run.stderr}`,
    );
  }
  return (JSON.parse(run.stdout) as { Dir: string }).Dir;
}

/** kubeconform's file name for a kind: kind, the first label of its group (none for the core group), version. */
function schemaFileName(kind: string, group: string, version: string): string {
  const groupPart = group === '' ? '' : `-${group.split('.')[0]}`;
  return `${kind}${groupPart}-${version}.json`.toLowerCase();
}

/**
 * As kubectl validates (and kubeconform's openapi2jsonschema.py converts): an object schema that lists its
 * properties allows no other, unless it says it keeps unknown fields; `int-or-string` is either.
 */
function strict(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(strict);
  if (node === null || typeof node !== 'object') return node;
  const schema: Schema = {};
  for (const [key, value] of Object.entries(node as Schema)) schema[key] = strict(value);
  if (schema.format === 'int-or-string') {
    return { description: schema.description, oneOf: [{ type: 'string' }, { type: 'integer' }] };
  }
  if (
    schema.properties !== undefined &&
    typeof schema.properties === 'object' &&
    !('additionalProperties' in schema) &&
    schema['x-kubernetes-preserve-unknown-fields'] !== true
  ) {
    schema.additionalProperties = false;
  }
  return schema;
}

/** Every `#/definitions/<name>` a schema reaches, itself included, following references through definitions. */
function reachable(start: string, definitions: Record<string, Schema>): Set<string> {
  const seen = new Set<string>();
  const queue = [start];
  while (queue.length > 0) {
    const name = queue.pop()!;
    if (seen.has(name)) continue;
    seen.add(name);
    const text = JSON.stringify(definitions[name] ?? {});
    for (const match of text.matchAll(/"\$ref":"#\/definitions\/([^"]+)"/g)) queue.push(match[1]!);
  }
  return seen;
}

function writeKubernetesSchemas(specDir: string, outDir: string): void {
  const swagger = JSON.parse(fs.readFileSync(path.join(specDir, 'swagger.json'), 'utf8')) as {
    definitions: Record<string, Schema>;
  };
  const definitions = strict(swagger.definitions) as Record<string, Schema>;
  for (const [name, definition] of Object.entries(swagger.definitions)) {
    const kinds = definition['x-kubernetes-group-version-kind'] as
      { group: string; version: string; kind: string }[] | undefined;
    if (!kinds) continue;
    // Self-contained: the kind's schema with every definition it refers to (some refer to themselves).
    const own: Record<string, Schema> = {};
    for (const ref of reachable(name, definitions)) own[ref] = definitions[ref]!;
    const schema = { ...definitions[name], definitions: own };
    for (const { group, version, kind } of kinds) {
      fs.writeFileSync(path.join(outDir, schemaFileName(kind, group, version)), JSON.stringify(schema));
    }
  }
}

/** A CRD file's schema per served version, read with the same YAML loader the compose tests use. */
function writeCrdSchemas(file: string, outDir: string): void {
  const crd = JSON.parse(execFileSync(composeCheckBin(), ['yaml', file], { encoding: 'utf8' })) as {
    kind: string;
    spec: {
      group: string;
      names: { kind: string };
      versions: { name: string; schema?: { openAPIV3Schema?: Schema } }[];
    };
  };
  if (crd.kind !== 'CustomResourceDefinition') return;
  for (const version of crd.spec.versions) {
    const schema = version.schema?.openAPIV3Schema;
    if (!schema) continue;
    fs.writeFileSync(
      path.join(outDir, schemaFileName(crd.spec.names.kind, crd.spec.group, version.name)),
      JSON.stringify(strict(schema)),
    );
  }
}
