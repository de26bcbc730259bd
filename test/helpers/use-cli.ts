import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, expect } from 'vitest';
import { ADMIN_TOKEN } from './stack.js';
import { useStack } from './use-stack.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
/** The CLI's entry point, as an installed `mailer` runs it. */
export const BIN = path.join(ROOT, 'bin/run.js');

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * A stack for the CLI tests and a way to run `bin/run.js` against it in a child process, configured only
 * through MAILER_URL, MAILER_API_KEY and MAILER_ADMIN_TOKEN, in a working directory of its own.
 */
export function useCli(env: () => Promise<Record<string, string>> = async () => ({})) {
  // `env`: more of the service's environment, made when the stack starts (a test's DNS server, say).
  const stack = useStack(async () => ({ MAILER_WEBHOOK_ALLOW_PRIVATE: '1', ...(await env()) }));
  let baseEnv: NodeJS.ProcessEnv = {};
  const cli = { stack, workDir: '', mailer, json, ok };
  beforeAll(async () => {
    cli.workDir = await fs.mkdtemp(path.join(stack.dataDir, 'cli-'));
    // Only what the CLI reads, so that nothing of the test runner's environment configures it.
    const { MAILER_URL: _u, MAILER_API_KEY: _k, MAILER_ADMIN_TOKEN: _t, ...rest } = process.env;
    baseEnv = {
      ...rest,
      MAILER_URL: `http://${stack.grpcAddress}`,
      MAILER_API_KEY: stack.apiKey,
      MAILER_ADMIN_TOKEN: ADMIN_TOKEN,
    };
  });

  /** Runs `mailer <args>` to its end. */
  function mailer(args: string[], env: NodeJS.ProcessEnv = {}, timeoutMs = 45_000): Promise<Run> {
    return new Promise((resolve, reject) => {
      const child = spawn(process.execPath, [BIN, ...args], {
        cwd: cli.workDir,
        env: { ...baseEnv, ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
      child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
      const timer = setTimeout(() => {
        child.kill('SIGKILL');
        reject(
          new Error(`mailer ${args.join(' ')} did not finish in ${timeoutMs} ms\nstdout: ${stdout}\nstderr: ${stderr}`),
        );
      }, timeoutMs);
      child.on('error', reject);
      child.on('close', (code) => {
        clearTimeout(timer);
        resolve({ code, stdout, stderr });
      });
    });
  }

  /** Runs `mailer <args> --json`, expects exit 0 and answers the parsed stdout. */
  async function json<T = Record<string, unknown>>(args: string[], env: NodeJS.ProcessEnv = {}): Promise<T> {
    const r = await mailer([...args, '--json'], env);
    expect(r.code, `mailer ${args.join(' ')} --json\nstdout: ${r.stdout}\nstderr: ${r.stderr}`).toBe(0);
    return JSON.parse(r.stdout) as T;
  }

  /** Runs `mailer <args>` and expects exit 0. */
  async function ok(args: string[], env: NodeJS.ProcessEnv = {}): Promise<Run> {
    const r = await mailer(args, env);
    expect(r.code, `mailer ${args.join(' ')}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`).toBe(0);
    return r;
  }

  return cli;
}
