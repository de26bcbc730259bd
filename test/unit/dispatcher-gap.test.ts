import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { createDispatcher, type GroupQueue } from '../../src/delivery/queue/dispatcher.js';
import type { Logger } from '../../src/logger.js';

const silent = { warn() {}, info() {}, debug() {}, error() {} } as unknown as Logger;

/** A queue whose claims hand out what `backlog` says is waiting (at most `limit`), and a record of when rounds started groups. */
function fakeQueue() {
  let backlog = 0;
  const starts: { at: number; size: number }[] = [];
  const queue: GroupQueue = {
    async claimGroup(_groupId, limit) {
      const n = Math.min(limit, backlog);
      backlog -= n;
      return Array.from({ length: n }, (_, i) => `id${i}`);
    },
    async staleGroups() {
      return [];
    },
    async unclaimGroup() {},
    async touchGroup() {},
  };
  return {
    queue,
    starts,
    add: (n: number) => {
      backlog += n;
    },
  };
}

describe("the email dispatcher's gap between drains", () => {
  it('waits the longer gap only after a round that claimed a busy amount', async () => {
    const q = fakeQueue();
    let poke = () => {};
    const dispatcher = createDispatcher({
      name: 'emails',
      queue: q.queue,
      channel: 'c',
      groupKind: 'deliveryGroup',
      logger: silent,
      startGroup: async (_id, ids) => {
        q.starts.push({ at: performance.now(), size: ids.length });
        return true;
      },
      listen: async (_channel, onNotify) => {
        poke = onNotify;
        return { unlisten: async () => {} };
      },
      groups: { size: 1000, minGapMs: 40, busy: { claimed: 100, gapMs: 250 } },
    });
    await dispatcher.start();
    const arrive = (n: number) => {
      q.add(n);
      poke();
    };
    try {
      await sleep(60);
      // Small rounds: the second waits out the short gap only.
      arrive(5);
      await sleep(10);
      arrive(5);
      await sleep(100);
      // A busy round, then the next has to wait the longer gap.
      arrive(150);
      await sleep(10);
      arrive(5);
      await sleep(400);
      expect(q.starts.map((s) => s.size)).toEqual([5, 5, 150, 5]);
      const gaps = q.starts.slice(1).map((s, i) => s.at - q.starts[i]!.at);
      expect(gaps[0]).toBeLessThan(90);
      expect(gaps[2]).toBeGreaterThanOrEqual(240);
    } finally {
      await dispatcher.stop();
    }
  });
});
