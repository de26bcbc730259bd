import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * The generated Python clients' tools (grpcio-tools, openapi-python-client), what the generated code imports
 * (grpcio, protobuf, httpx, attrs, python-dateutil) and the webhook verifier (standardwebhooks), pinned in
 * sdk/python/requirements.txt and installed into a venv of the per-user cache named by that file's digest: a new
 * pin installs afresh, an old venv is never changed under a running test. .ci/run makes it up front; a test that
 * finds it missing makes it then (python3 with venv, and PyPI, are needed once). Everything runs as `venv/bin/python -m <module>`: a venv built in a
 * folder of its own and renamed into place (test files run in parallel) has console scripts whose #! line names
 * the old folder, but its python finds its packages wherever it is.
 */

const root = path.resolve(import.meta.dirname, '../..');
export const PYTHON_REQUIREMENTS = path.join(root, 'sdk/python/requirements.txt');

function cacheDir(): string {
  return path.join(process.env.XDG_CACHE_HOME ?? path.join(os.homedir(), '.cache'), 'mailer');
}

/** The venv's folder: one per digest of the requirements file. */
export function pythonVenvDir(): string {
  const digest = crypto.createHash('sha256').update(fs.readFileSync(PYTHON_REQUIREMENTS)).digest('hex').slice(0, 12);
  return path.join(cacheDir(), `python-clients-${digest}`);
}

/** Runs a program to its end; rejects with its output when it fails. Asynchronous: a service under test may be answering from this very process. */
function run(
  bin: string,
  args: string[],
  what: string,
  options: { cwd?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number } = {},
): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, args, { cwd: options.cwd ?? root, env: options.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timeoutMs = options.timeoutMs ?? 120_000;
    const timer = setTimeout(() => {
      stderr += `\n[killed: not done within ${timeoutMs / 1000} s]`;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(new Error(`${what} failed: ${err.message}`));
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      if (code === 0) resolve(stdout);
      else reject(new Error(`${what} failed (exit ${code}):\n${stdout}${stderr}`));
    });
  });
}

const NEEDED_ONCE = '(python3 with venv, and PyPI, are needed once; .ci/run does it)';

/** The venv's python, the venv made first when missing (under a minute on a fresh machine). */
export async function pythonVenv(): Promise<string> {
  const dir = pythonVenvDir();
  const python = path.join(dir, 'bin', 'python');
  if (fs.existsSync(python)) return python;
  fs.mkdirSync(cacheDir(), { recursive: true });
  const tmp = fs.mkdtempSync(path.join(cacheDir(), '.building-python-clients-'));
  try {
    await run('python3', ['-m', 'venv', tmp], `python3 -m venv ${NEEDED_ONCE}`);
    const pip = ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', '-r', PYTHON_REQUIREMENTS];
    await run(path.join(tmp, 'bin', 'python'), pip, `pip install -r sdk/python/requirements.txt ${NEEDED_ONCE}`, {
      timeoutMs: 600_000,
    });
    try {
      fs.renameSync(tmp, dir);
    } catch (err) {
      // Another test file made it meanwhile: theirs is as good.
      if (!fs.existsSync(python)) throw err;
    }
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  return python;
}

/** Runs the venv's python (a module, a script) and returns what it printed; rejects with its output on failure. */
export async function runPython(
  args: string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number } = {},
): Promise<string> {
  const python = await pythonVenv();
  // The venv's bin first: openapi-python-client formats what it writes with the ruff it depends on.
  const env = { ...process.env, ...options.env, PATH: `${path.dirname(python)}${path.delimiter}${process.env.PATH}` };
  return run(python, args, `python ${args.join(' ')}`, { ...options, env });
}

/** The gRPC stubs of proto/mail/v1 (messages, stubs and type stubs) into outDir, as the `mail.v1` package. */
export async function generatePythonGrpc(outDir: string): Promise<void> {
  fs.mkdirSync(outDir, { recursive: true });
  const protos = fs
    .readdirSync(path.join(root, 'proto/mail/v1'))
    .filter((f) => f.endsWith('.proto'))
    .map((f) => `proto/mail/v1/${f}`);
  await runPython([
    '-m',
    'grpc_tools.protoc',
    '-Iproto',
    `--python_out=${outDir}`,
    `--grpc_python_out=${outDir}`,
    `--pyi_out=${outDir}`,
    ...protos,
  ]);
}

/**
 * The REST client from an OpenAPI document (a URL such as a running service's /v1/mail/openapi.json, or a file)
 * into outDir/mailer_rest, the package `mailer_rest`.
 */
export async function generatePythonRest(outDir: string, openapi: string): Promise<void> {
  fs.mkdirSync(outDir, { recursive: true });
  const target = path.join(outDir, 'mailer_rest');
  const source = /^https?:\/\//.test(openapi) ? ['--url', openapi] : ['--path', openapi];
  await runPython([
    '-m',
    'openapi_python_client',
    'generate',
    ...source,
    '--output-path',
    target,
    '--meta',
    'none',
    '--overwrite',
  ]);
}
