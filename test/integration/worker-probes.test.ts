import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/logger.js';
import { startMailer, type Mailer } from '../../src/main.js';
import { call } from '../helpers/http.js';
import { startSmtpSink, type SmtpSink } from '../helpers/smtp-sink.js';
import { createTestDatabase, stackEnv } from '../helpers/stack.js';

const METRICS_TOKEN = 'metrics-token-for-the-worker-probes-test';
const started: { mailer?: Mailer; sink?: SmtpSink } = {};

afterAll(async () => {
  await started.mailer?.stop();
  await started.sink?.close();
});

/** A process with MAILER_ROLE=worker: no REST gateway, only the worker and its probes. */
async function startWorkerProcess(): Promise<Mailer> {
  started.sink = await startSmtpSink();
  const taskQueue = `probes-${crypto.randomBytes(4).toString('hex')}`;
  const dataDir = path.join(inject('tmpRoot'), taskQueue);
  await fs.mkdir(dataDir, { recursive: true });
  const env = stackEnv(await createTestDatabase(), started.sink.url, taskQueue, dataDir, {
    MAILER_ROLE: 'worker',
    MAILER_METRICS_TOKEN: METRICS_TOKEN,
  });
  started.mailer = await startMailer(loadConfig(env), { logger: createLogger('warn', 'test'), env: process.env });
  return started.mailer;
}

describe('a worker process serves its own probes (MAILER_WORKER_PORT)', () => {
  it("answers /healthz and /readyz, /metrics with the delivery metrics behind the metrics token, and 404 in the spec's shape", async () => {
    const worker = await startWorkerProcess();
    expect(worker.restUrl).toBeUndefined();
    const base = worker.workerProbeUrl!;
    expect(base).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);

    expect((await call('GET', `${base}/healthz`)).body).toEqual({ status: 'ok' });
    const ready = await call('GET', `${base}/readyz`);
    expect([ready.status, ready.body]).toEqual([200, { status: 'ready' }]);

    const refused = await call('GET', `${base}/metrics`);
    expect(refused.status).toBe(401);
    expect(refused.body).toMatchObject({ error: expect.any(String), message: 'Invalid or missing metrics token' });
    const metrics = await call('GET', `${base}/metrics`, { token: METRICS_TOKEN });
    expect(metrics.status).toBe(200);
    expect(metrics.text).toContain('# TYPE mailer_deliveries_total counter');
    expect(metrics.text).toContain('mailer_process_cpu_seconds_total');
    // The shared delivery queue, and the Temporal SDK's metrics of this process's worker.
    expect(metrics.text).toMatch(/^mailer_delivery_queue_depth\{state="waiting"\} 0$/m);
    expect(metrics.text).toMatch(/^temporal_worker_task_slots_available\{.*task_queue="probes-/m);

    const unknown = await call('GET', `${base}/v1/mail/emails`);
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ error: 'not found', message: 'route GET /v1/mail/emails not found' });
  });
});
