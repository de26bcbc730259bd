import { createRequire } from 'node:module';
import { NativeConnection, Worker, bundleWorkflowCode, type WorkflowBundleOption } from '@temporalio/worker';
import type { Activities } from './activities.js';
import type { Logger } from '../logger.js';
import type { Tracing } from '../telemetry/tracing.js';
import { appErrorInterceptor } from './app-error-interceptor.js';
import { installTemporalRuntime } from './sdk-runtime.js';
import { tracingActivityInterceptor, workflowSpanSinks, workflowTracingModule } from './temporal-tracing.js';
// The SDK's unreachable-server errors are classified in the worker's process too (errors.ts).
import './temporal-unavailable.js';

const require = createRequire(import.meta.url);

/** The workflows entry point (source in development, compiled in dist/), bundled at start unless prebuilt. */
export function workflowsPath(): string {
  try {
    return require.resolve('../../workflows/index.ts');
  } catch {
    return require.resolve('../../workflows/index.js');
  }
}

export async function buildWorkflowBundle(): Promise<{ code: string }> {
  // The tracing interceptors are in every bundle; they trace only workflows started by a tracing process.
  return bundleWorkflowCode({
    workflowsPath: workflowsPath(),
    workflowInterceptorModules: [workflowTracingModule()],
    logger: quietBundlerLogger,
  });
}

const quietBundlerLogger = {
  log: () => {},
  trace: () => {},
  debug: () => {},
  info: () => {},
  warn: (message: string) => console.warn(message),
  error: (message: string) => console.error(message),
};

export interface TemporalWorker {
  run(): Promise<void>;
  shutdown(): Promise<void>;
}

export async function createTemporalWorker(options: {
  address: string;
  namespace: string;
  taskQueue: string;
  /** Every activity function by name (deliveries, webhooks, jobs, domains, retention). */
  activities: Activities;
  bundle: WorkflowBundleOption | undefined;
  logger: Logger;
  tracing: Pick<Tracing, 'enabled' | 'spanProcessor' | 'resource'>;
}): Promise<TemporalWorker> {
  installTemporalRuntime(options.logger);
  const connection = await NativeConnection.connect({ address: options.address });
  const worker = await Worker.create({
    connection,
    namespace: options.namespace,
    taskQueue: options.taskQueue,
    ...(options.bundle ? { workflowBundle: options.bundle } : { workflowsPath: workflowsPath() }),
    activities: options.activities,
    maxConcurrentActivityTaskExecutions: 32,
    // Outermost first: an activity's span sees the failure as Temporal is told it.
    interceptors: {
      activity: options.tracing.enabled ? [tracingActivityInterceptor, appErrorInterceptor] : [appErrorInterceptor],
      // A prebuilt bundle has them already (buildWorkflowBundle); naming them again only draws a warning.
      ...(options.bundle ? {} : { workflowModules: [workflowTracingModule()] }),
    },
    sinks: workflowSpanSinks(options.tracing),
    shutdownGraceTime: '10 seconds',
  });
  let running: Promise<void> | undefined;
  return {
    run() {
      running = worker.run().finally(() => connection.close());
      return running;
    },
    async shutdown() {
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await running;
    },
  };
}
