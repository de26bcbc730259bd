import path from 'node:path';
import { jobsContext, partContext, type BenchContext, type PartResult } from '../lib/context.js';
import { workerMemory, type MemoryResult } from './worker-memory.js';
import { MEMORY_PROBE } from '../lib/memory.js';
import { SENDER_DOMAIN } from '../lib/payload.js';
import { prepareAccounts, startService, startWorker } from '../lib/service.js';
import { MEMORY_TAIL_MS } from '../lib/settings.js';

/**
 * The service as two processes (MAILER_ROLE=api, MAILER_ROLE=worker) on a database of their own: the
 * worker's memory with many scheduled emails pending.
 */
export async function splitServiceMemory(bench: BenchContext): Promise<PartResult<MemoryResult>> {
  const ctx = partContext(bench);
  const { infra, sizes } = ctx;
  await infra.createDatabase('bench_memory');
  // Its own task queue: nothing of the earlier runs' reaches this worker.
  const env = { ...infra.serviceEnv('bench_memory', 'service-api'), TEMPORAL_TASK_QUEUE: 'mail-memory' };
  const memoryFiles = {
    api: path.join(infra.tmp, 'api-memory.json'),
    worker: path.join(infra.tmp, 'worker-memory.json'),
  };
  const probe = { nodeArgs: ['--expose-gc'], preload: [MEMORY_PROBE] };
  const api = await startService(
    { ...env, MAILER_ROLE: 'api', BENCH_MEMORY_FILE: memoryFiles.api },
    { name: 'service API', ...probe },
  );
  ctx.underTest.server = api;
  await prepareAccounts(api, SENDER_DOMAIN, 0);
  const wrk = await startWorker(
    { ...env, MAILER_DATA_DIR: path.join(infra.tmp, 'service-worker'), BENCH_MEMORY_FILE: memoryFiles.worker },
    probe,
  );
  ctx.underTest.worker = wrk;
  ctx.log(
    `service split: API pid ${api.pid} (${api.baseUrl}), worker pid ${wrk.pid}; worker memory with ${sizes.memoryPending} scheduled emails pending`,
  );
  const creationDeadline = () => performance.now() + ctx.remaining() - ctx.planned(MEMORY_TAIL_MS);
  const memory = await workerMemory(jobsContext(ctx), api, wrk, sizes.memoryPending, memoryFiles, creationDeadline);
  await Promise.all([api.stop(), wrk.stop()]);
  ctx.underTest.server = undefined;
  ctx.underTest.worker = undefined;
  return { rows: ctx.rows, figures: memory };
}
