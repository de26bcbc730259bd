import { execFile, spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it, onTestFailed } from 'vitest';
import { defaultAccountKey } from '../helpers/crash-deployments.js';
import { call, eventually, validEmail } from '../helpers/http.js';
import { assembleImage, type Layout } from '../helpers/image-layout.js';
import { freePort } from '../helpers/ports.js';
import { startSmtpSink, type SmtpSink } from '../helpers/smtp-sink.js';
import { ADMIN_TOKEN, createTestDatabase, stackEnv } from '../helpers/stack.js';

/**
 * The image without Docker: the Dockerfile's stages carried out in a directory (test/helpers/image-layout.ts:
 * its COPYs and the real `npm run build`; only `npm ci` is replaced by the repository's node_modules), then
 * what a container does with the result: `mailer` on PATH, the CMD in both roles against the shared
 * PostgreSQL and Temporal, the HEALTHCHECK script, and an email sent through the compiled API and delivered
 * by the compiled worker from the prebuilt workflow bundle.
 */
let root: string;
let image: Layout;
const procs: { name: string; proc: ChildProcess; output: string[] }[] = [];

beforeAll(() => {
  root = fs.mkdtempSync(path.join(inject('tmpRoot'), 'image-'));
  image = assembleImage(root);
}, 600_000);

afterAll(async () => {
  await Promise.all(
    procs.map(
      ({ proc }) =>
        new Promise<void>((resolve) => {
          if (proc.exitCode !== null || proc.signalCode !== null) return resolve();
          proc.once('exit', () => resolve());
          proc.kill('SIGKILL');
        }),
    ),
  );
  fs.rmSync(root, { recursive: true, force: true });
});

function run(
  cmd: string,
  args: string[],
  env: NodeJS.ProcessEnv,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(cmd, args, { cwd: image.app, env, timeout: 60_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? -1) : 0, stdout, stderr });
    });
  });
}

/** The container's environment: the image's ENV (paths under /app mapped into the layout) and `extra`. */
function containerEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { PATH: `${image.binDir}:${process.env.PATH ?? ''}`, HOME: process.env.HOME };
  for (const [k, v] of Object.entries(image.env))
    env[k] = v.startsWith('/app/') ? path.join(image.app, v.slice('/app/'.length)) : v;
  return { ...env, ...extra };
}

describe('the image, assembled from the Dockerfile', () => {
  it('has the compiled service, workflow bundle and CLI, and no TypeScript', () => {
    for (const f of [
      'src/start.js',
      'cli/commands/server/start.js',
      'workflows/index.js',
      'workflow-bundle.js',
      'bin/run.js',
      'docker/healthcheck.js',
      'src/console/static',
      // The built-in egress shaping rules, where src/delivery/egress/rules-file.js looks (../../../config).
      'config/egress-rules.toml',
    ]) {
      expect(fs.existsSync(path.join(image.app, f)), f).toBe(true);
    }
    const files = fs.readdirSync(image.app, { recursive: true }) as string[];
    expect(files.filter((f) => !f.startsWith('node_modules') && /\.ts$/.test(f))).toEqual([]);
    expect(fs.statSync(path.join(image.app, 'workflow-bundle.js')).size).toBeGreaterThan(100_000);
  });

  it('runs `mailer` from PATH: the compiled commands load (help, and a call that finds no server)', async () => {
    const help = await run('mailer', ['--help'], containerEnv());
    expect(help.stderr).toBe('');
    for (const topic of ['accounts', 'emails', 'server', 'webhooks']) expect(help.stdout).toContain(topic);
    const migrate = await run('mailer', ['server', 'migrate', '--help'], containerEnv());
    expect(migrate.stdout).toContain('Apply the database migrations');
    const closed = await freePort();
    const refused = await run(
      'mailer',
      ['accounts', 'list', '--url', `http://127.0.0.1:${closed}`, '--admin-token', 'x'.repeat(32)],
      containerEnv(),
    );
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^unavailable: .*ECONNREFUSED/m);
  });

  describe('running both roles, as docker-compose.yml does', () => {
    let sink: SmtpSink;
    let env: NodeJS.ProcessEnv;
    let ports: { rest: number; grpc: number; worker: number };
    beforeAll(async () => {
      sink = await startSmtpSink();
      ports = { rest: await freePort(), grpc: await freePort(), worker: await freePort() };
      const dataDir = path.join(root, 'data');
      fs.mkdirSync(dataDir);
      const base = stackEnv(
        await createTestDatabase(),
        sink.url,
        `image-${crypto.randomBytes(4).toString('hex')}`,
        dataDir,
        {
          PORT: String(ports.rest),
          GRPC_PORT: String(ports.grpc),
          MAILER_WORKER_PORT: String(ports.worker),
          MAILER_ENCRYPTION_KEY: crypto.randomBytes(32).toString('hex'),
        },
      );
      // The database, Temporal and SMTP settings of the test stack; everything else as the image has it.
      const pick = [
        'DATABASE_URL',
        'TEMPORAL_ADDRESS',
        'TEMPORAL_TASK_QUEUE',
        'SMTP_URL',
        'MAILER_ADMIN_TOKEN',
        'MAILER_ENCRYPTION_KEY',
        'PORT',
        'GRPC_PORT',
        'MAILER_WORKER_PORT',
        'MAILER_INBOUND_PORT',
        'MAILER_SUBMISSION_PORT',
      ];
      env = containerEnv({
        ...Object.fromEntries(pick.map((k) => [k, base[k]])),
        MAILER_DATA_DIR: dataDir,
        HOST: '127.0.0.1',
        LOG_LEVEL: 'warn',
      });
    }, 60_000);
    afterAll(() => sink?.close());

    const start = (role: string) => {
      // The image's CMD, in its WORKDIR.
      const proc = spawn('node', ['src/start.js'], {
        cwd: image.app,
        env: { ...env, MAILER_ROLE: role },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const entry = { name: role, proc, output: [] as string[] };
      proc.stdout!.on('data', (d: Buffer) => entry.output.push(d.toString()));
      proc.stderr!.on('data', (d: Buffer) => entry.output.push(d.toString()));
      procs.push(entry);
      return entry;
    };
    // The HEALTHCHECK as the image runs it: `node /app/docker/healthcheck.js`, in the container's environment.
    const healthy = (role: string) =>
      run('node', [path.join(image.app, 'docker/healthcheck.js')], { ...env, MAILER_ROLE: role });

    it('starts the api and worker roles with the CMD; the HEALTHCHECK passes for each; mail goes out', async () => {
      onTestFailed(() =>
        console.error(procs.map((p) => `--- ${p.name} ---\n${p.output.join('').slice(-4000)}`).join('\n')),
      );
      // Before anything listens, the health check fails (it is no constant).
      expect((await healthy('worker')).code).toBe(1);
      const worker = start('worker');
      const api = start('api');
      for (const [role, p] of [
        ['worker', worker],
        ['api', api],
      ] as const) {
        await eventually(
          async () => {
            if (p.proc.exitCode !== null) throw new Error(`${role} exited ${p.proc.exitCode}`);
            return (await healthy(role)).code === 0;
          },
          90_000,
          250,
        );
      }
      // The worker's bundle was the prebuilt one: it says so in no log, but it was given and it exists.
      expect(env.MAILER_WORKFLOW_BUNDLE).toBe(path.join(image.app, 'workflow-bundle.js'));

      // `docker compose exec api mailer accounts list`: the CLI in the container, its token from the environment.
      const listed = await run(
        'mailer',
        ['accounts', 'list', '--json', '--url', `http://127.0.0.1:${ports.grpc}`],
        env,
      );
      expect(listed.stderr).toBe('');
      expect(JSON.parse(listed.stdout).accounts.map((a: { name: string }) => a.name)).toContain('default');
      expect(env.MAILER_ADMIN_TOKEN).toBe(ADMIN_TOKEN);

      const baseUrl = `http://127.0.0.1:${ports.rest}`;
      const key = await defaultAccountKey(baseUrl, 'image-test');
      const sent = await call('POST', `${baseUrl}/v1/mail/emails`, {
        token: key,
        body: validEmail({ subject: 'From the image' }),
      });
      expect(sent.status, sent.text).toBe(200);
      const [message] = await sink.waitFor(1, 60_000);
      expect(message!.parsed.subject).toBe('From the image');

      // SIGTERM (docker stop) ends both gracefully.
      for (const p of [api, worker]) {
        const exited = new Promise<number | null>((resolve) => p.proc.once('exit', (code) => resolve(code)));
        p.proc.kill('SIGTERM');
        expect(await exited, p.name).toBe(0);
      }
    }, 240_000);
  });
});
