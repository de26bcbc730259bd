import crypto from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { inject } from 'vitest';

/**
 * Runs `fn` while a worker with the real workflow bundle and the given stub activities polls a task queue
 * of its own on the dev server the integration setup started (the time-skipping test server cannot be
 * downloaded here). The worker stops when `fn` settles.
 */
export async function withStubWorker<T>(
  activities: object,
  fn: (client: Client, taskQueue: string) => Promise<T>,
): Promise<T> {
  const taskQueue = `wf-${crypto.randomBytes(4).toString('hex')}`;
  const nativeConnection = await NativeConnection.connect({ address: inject('temporalAddress') });
  const connection = await Connection.connect({ address: inject('temporalAddress') });
  try {
    const worker = await Worker.create({
      connection: nativeConnection,
      taskQueue,
      activities,
      workflowBundle: { codePath: inject('workflowBundle') },
    });
    return await worker.runUntil(fn(new Client({ connection }), taskQueue));
  } finally {
    await connection.close();
    await nativeConnection.close();
  }
}
