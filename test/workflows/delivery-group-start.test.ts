import crypto from 'node:crypto';
import { describe, expect, inject, it } from 'vitest';
import { DEFAULT_SMTP_RETRY } from '../../workflows/deliver-emails.js';
import { connectTemporal } from '../../src/temporal/client.js';
import { withStubWorker } from '../helpers/stub-worker.js';

/**
 * Starting a delivery group's workflow again (the dispatcher's sweep does, for groups it found stale): a
 * group whose run completed has left the delivery queue, so it is not run twice; one whose run was
 * terminated (or failed, or timed out) left its emails queued, and runs again.
 */
describe('startDeliveryGroup, for a group started before', () => {
  it('answers false once the run completed (no second run), true again after one was terminated', async () => {
    const delivered: string[][] = [];
    let release = () => {};
    const hanging = new Promise<void>((resolve) => (release = resolve));
    const activities = {
      async deliverEmails({ emailIds }: { emailIds: string[] }) {
        delivered.push(emailIds);
        if (emailIds.includes('em_hang')) await hanging;
        return { sent: emailIds.length, bounced: 0, retry: [] };
      },
    };
    await withStubWorker(activities, async (client, taskQueue) => {
      const temporal = await connectTemporal({
        address: inject('temporalAddress'),
        namespace: 'default',
        taskQueue,
        smtpRetry: DEFAULT_SMTP_RETRY,
      });
      try {
        const done = `grp-test-${crypto.randomBytes(4).toString('hex')}`;
        expect(await temporal.startDeliveryGroup(done, ['em_a'])).toBe(true);
        await client.workflow.getHandle(done).result();
        expect(await temporal.startDeliveryGroup(done, ['em_a']), 'a completed group').toBe(false);

        const cut = `grp-test-${crypto.randomBytes(4).toString('hex')}`;
        expect(await temporal.startDeliveryGroup(cut, ['em_hang'])).toBe(true);
        expect(await temporal.startDeliveryGroup(cut, ['em_hang']), 'a running group').toBe(false);
        await expect.poll(() => delivered.filter((ids) => ids.includes('em_hang')).length).toBe(1);
        await client.workflow.getHandle(cut).terminate('the test');
        release();
        expect(await temporal.startDeliveryGroup(cut, ['em_hang']), 'a terminated group').toBe(true);
        await client.workflow.getHandle(cut).result();
        expect(delivered).toEqual([['em_a'], ['em_hang'], ['em_hang']]);
      } finally {
        await temporal.close();
      }
    });
  });
});
