import { afterEach, describe, expect, it } from 'vitest';
import type { DeliveryToSend } from '../../src/domain/entities/webhooks.js';
import type { Logger } from '../../src/logger.js';
import type { AttemptOutcome, WebhookAttempt } from '../../src/webhooks/webhook-attempt.js';
import { createWebhookDispatcher, type WebhookDispatcherDeps } from '../../src/webhooks/webhook-dispatcher.js';

/**
 * The dispatcher's own decisions (what it attempts at once, what it hands to workflows, what the sweep
 * leaves alone), with its seams faked: the queue (an array of queued ids), the attempt, the workflow start.
 */
const delivery = (id: string): DeliveryToSend => ({ id, status: 'pending', attempt: 1 }) as DeliveryToSend;
const quiet = { warn: () => {}, info: () => {} } as unknown as Logger;
const until = async (cond: () => boolean, ms = 3000) => {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error('condition not reached');
    await new Promise((r) => setTimeout(r, 5));
  }
};

function setup(opts: {
  concurrency: number;
  send: (d: DeliveryToSend) => Promise<AttemptOutcome>;
  stale?: { groupId: string; ids: string[] }[];
}) {
  const queued: string[] = [];
  const claims: number[] = [];
  const starts: { groupId: string; ids: string[]; retryAt?: Record<string, number> }[] = [];
  const regrouped: { groupId: string; ids: string[] }[] = [];
  let notify = () => {};
  const queue: WebhookDispatcherDeps['queue'] = {
    claimForSending: async (_groupId, limit) => {
      claims.push(limit);
      return queued.splice(0, limit).map(delivery);
    },
    claimGroup: async (_groupId, limit) => queued.splice(0, limit),
    regroup: async (groupId, ids) => {
      regrouped.push({ groupId, ids });
    },
    staleGroups: async () => opts.stale ?? [],
    touchGroup: async () => {},
    unclaimGroup: async () => {},
  };
  const attempt = { admit: async () => true, send: opts.send } as unknown as WebhookAttempt;
  const dispatcher = createWebhookDispatcher({
    queue,
    attempt,
    channel: 'c',
    concurrency: opts.concurrency,
    logger: quiet,
    startGroup: async (groupId, ids, retryAt) => {
      starts.push({ groupId, ids, ...(retryAt ? { retryAt } : {}) });
      return true;
    },
    listen: async (_c, fn) => {
      notify = fn;
      return { unlisten: async () => {} };
    },
  });
  const enqueue = (...ids: string[]) => {
    queued.push(...ids);
    notify();
  };
  return { dispatcher, enqueue, queued, claims, starts, regrouped };
}

let stop: (() => Promise<void>) | undefined;
afterEach(async () => {
  await stop?.();
  stop = undefined;
});

describe('webhook dispatcher', () => {
  it('makes first attempts itself, at most `concurrency` at once, and starts no workflow when they succeed', async () => {
    let inFlight = 0;
    let most = 0;
    const sent: string[] = [];
    const t = setup({
      concurrency: 3,
      send: async (d) => {
        most = Math.max(most, ++inFlight);
        await new Promise((r) => setTimeout(r, 30));
        inFlight -= 1;
        sent.push(d.id);
        return { result: 'succeeded' };
      },
    });
    await t.dispatcher.start();
    stop = t.dispatcher.stop;
    t.enqueue('d1', 'd2', 'd3', 'd4', 'd5', 'd6', 'd7');
    await until(() => sent.length === 7);
    expect(most).toBe(3);
    expect(t.claims.every((limit) => limit <= 3)).toBe(true);
    expect(t.starts).toEqual([]);
  });

  it('hands failed first attempts to one workflow of their own, each retry due 1 s after its failure', async () => {
    const t = setup({
      concurrency: 8,
      send: async (d) => (d.id === 'ok' ? { result: 'succeeded' } : { result: 'failed', error: 'HTTP 500' }),
    });
    await t.dispatcher.start();
    stop = t.dispatcher.stop;
    const before = Date.now();
    t.enqueue('ok', 'bad1', 'bad2');
    await until(() => t.starts.length === 1);
    const [start] = t.starts;
    expect([...start!.ids].sort()).toEqual(['bad1', 'bad2']);
    // The workflow's group is the one the deliveries were moved to, so a stale claim is that workflow's.
    expect(t.regrouped).toEqual([{ groupId: start!.groupId, ids: start!.ids }]);
    for (const id of ['bad1', 'bad2']) {
      expect(start!.retryAt![id]).toBeGreaterThanOrEqual(before + 1000);
      expect(start!.retryAt![id]).toBeLessThan(Date.now() + 1000);
    }
  });

  it('when every slot stays busy, queued deliveries go to a workflow with the whole schedule', async () => {
    let release = () => {};
    const held = new Promise<void>((r) => {
      release = r;
    });
    const t = setup({
      concurrency: 1,
      send: async () => {
        await held;
        return { result: 'succeeded' };
      },
    });
    await t.dispatcher.start();
    stop = async () => {
      release();
      await t.dispatcher.stop();
    };
    t.enqueue('slow');
    await until(() => t.claims.length === 1);
    t.enqueue('w1', 'w2');
    await until(() => t.starts.length === 1);
    expect(t.starts[0]).toEqual({ groupId: expect.stringMatching(/^whg_/), ids: ['w1', 'w2'] });
    expect(t.queued).toEqual([]);
  });

  it('the sweep restarts stale groups with the whole schedule, but not one whose attempt is in flight here', async () => {
    let release = () => {};
    const held = new Promise<void>((r) => {
      release = r;
    });
    const t = setup({
      concurrency: 4,
      send: async () => {
        await held;
        return { result: 'succeeded' };
      },
      stale: [
        { groupId: 'whg_mine', ids: ['mine'] },
        { groupId: 'whg_dead', ids: ['orphan'] },
      ],
    });
    await t.dispatcher.start();
    stop = async () => {
      release();
      await t.dispatcher.stop();
    };
    t.enqueue('mine');
    await until(() => t.claims.length >= 1 && t.queued.length === 0);
    await t.dispatcher.sweep();
    expect(t.starts).toEqual([{ groupId: 'whg_dead', ids: ['orphan'] }]);
  });
});
