import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { serve } from './ipc.js';

/**
 * Baseline 4, the worker side: a Temporal worker (the prebuilt bench bundle of bench/workflows/noop.ts)
 * polling its own task queue on the shared dev server, so that started workflows also run to completion
 * while the bench process starts them.
 */
const address = process.env.BENCH_TEMPORAL_ADDRESS;
const taskQueue = process.env.BENCH_TASK_QUEUE;
const bundle = process.env.BENCH_WORKFLOW_BUNDLE;
if (!address || !taskQueue || !bundle)
  throw new Error('BENCH_TEMPORAL_ADDRESS, BENCH_TASK_QUEUE and BENCH_WORKFLOW_BUNDLE are required');

// ERROR: the worker warns that it polls no activity task queue, which is the point here.
Runtime.install({ logger: new DefaultLogger('ERROR') });
const connection = await NativeConnection.connect({ address });
const worker = await Worker.create({
  connection,
  namespace: 'default',
  taskQueue,
  workflowBundle: { codePath: bundle },
});
const running = worker.run();
serve({}, {}, async () => {
  worker.shutdown();
  // run() settles once the shutdown is done; a worker that failed says why instead of stopping silently.
  await running.catch((err: Error) => process.stderr.write(`bench Temporal worker: ${err.message}\n`));
  await connection.close();
});
