import { Client, Connection, WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import type { deliverEmailsWorkflow } from '../../workflows/deliver-emails.js';

export interface TemporalClient {
  client: Client;
  /** Starts a group's delivery workflow; false when one with that id already runs (a repeated start). */
  startDeliveryGroup(groupId: string, emailIds: string[]): Promise<boolean>;
  ping(): Promise<void>;
  close(): Promise<void>;
}

export async function connectTemporal(options: { address: string; namespace: string; taskQueue: string }): Promise<TemporalClient> {
  const connection = await Connection.connect({ address: options.address });
  const client = new Client({ connection, namespace: options.namespace });
  return {
    client,
    async startDeliveryGroup(groupId, emailIds) {
      try {
        await client.workflow.start<typeof deliverEmailsWorkflow>('deliverEmailsWorkflow', {
          workflowId: groupId,
          taskQueue: options.taskQueue,
          args: [{ emailIds }],
        });
        return true;
      } catch (err) {
        if (err instanceof WorkflowExecutionAlreadyStartedError) return false;
        throw err;
      }
    },
    async ping() {
      await connection.workflowService.getSystemInfo({});
    },
    close: () => connection.close(),
  };
}
