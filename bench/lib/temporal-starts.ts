import type { Client } from '@temporalio/client';
import { percentiles, type Percentiles } from './load.js';

/**
 * Baseline 4, the client side: `concurrency` loops each starting the trivial workflow (a fresh workflow
 * id each time) for a fixed time; a start counts once the server answered it. Then waits for the
 * started workflows to complete (the worker child runs them) and counts those.
 */
export interface StartsRun {
  concurrency: number;
  started: number;
  failed: number;
  firstError?: string;
  elapsedS: number;
  startsPerSec: number;
  startLatencyMs: Percentiles;
  /** Started in this run and completed by the time the count was taken (undefined: count unavailable). */
  completed?: number;
  completionWaitS?: number;
}

let runSeq = 0;

export async function measureStarts(
  client: Client,
  taskQueue: string,
  concurrency: number,
  durationMs: number,
  completionWaitMs: number,
): Promise<StartsRun> {
  const run = `r${++runSeq}-${Date.now().toString(36)}`;
  let started = 0;
  let failed = 0;
  let firstError: string | undefined;
  const latencies: number[] = [];
  let seq = 0;
  const t0 = performance.now();
  const deadline = t0 + durationMs;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < deadline) {
        const s = performance.now();
        try {
          await client.workflow.start('benchNoopWorkflow', { taskQueue, workflowId: `bench-${run}-${seq++}` });
          latencies.push(performance.now() - s);
          started += 1;
        } catch (err) {
          failed += 1;
          firstError ??= (err as Error).message;
        }
      }
    }),
  );
  const elapsedS = (performance.now() - t0) / 1000;
  const result: StartsRun = {
    concurrency,
    started,
    failed,
    ...(firstError ? { firstError } : {}),
    elapsedS: Math.round(elapsedS * 100) / 100,
    startsPerSec: Math.round(started / elapsedS),
    startLatencyMs: percentiles(latencies),
  };

  // Completions, from the dev server's visibility store (eventually consistent: poll until all are in).
  const w0 = performance.now();
  try {
    for (;;) {
      const { count } = await client.workflow.count(
        `WorkflowId STARTS_WITH "bench-${run}-" AND ExecutionStatus = "Completed"`,
      );
      result.completed = count;
      if (count >= started || performance.now() - w0 > completionWaitMs) break;
      await new Promise((r) => setTimeout(r, 250));
    }
    result.completionWaitS = Math.round((performance.now() - w0) / 100) / 10;
  } catch {
    // Counting needs the dev server's visibility store; the start figure stands without it.
  }
  return result;
}
