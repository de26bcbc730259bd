import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccountsRepo } from '../../src/db/index.js';
import { createApiKeysRepo } from '../../src/db/index.js';
import { createRateBucketsRepo } from '../../src/db/index.js';
import { createSql, type Sql } from '../../src/db/sql.js';
import type { BucketStore } from '../../src/domain/token-bucket.js';
import { createMemoryBuckets } from '../../src/services/memory-buckets.js';
import { createRateLimiter } from '../../src/services/rate-limiter.js';
import { createTestDatabase } from '../helpers/stack.js';

/**
 * The shared buckets in a real PostgreSQL: the lease statement's arithmetic, two pools (two API processes)
 * leasing from one bucket at once, and what a request pays for the shared limit (printed).
 */

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
let url: string;
const pools: Sql[] = [];
const pool = (max = 10) => {
  const sql = createSql(url, { max });
  pools.push(sql);
  return sql;
};

beforeAll(async () => {
  url = await createTestDatabase();
});
afterAll(async () => {
  await Promise.all(pools.map((p) => p.end()));
});

describe('rate_buckets: the lease statement', () => {
  it('a new bucket is full; a lease takes whole tokens, never more than the bucket holds; it refills at the rate', async () => {
    const repo = createRateBucketsRepo(pool(1));
    expect(await repo.lease('k1', 3, 5)).toEqual({ granted: 3, tokens: 2 });
    const second = await repo.lease('k1', 3, 5);
    expect(second.granted).toBe(2);
    expect(second.tokens).toBeLessThan(1);
    const empty = await repo.lease('k1', 3, 5);
    expect(empty.granted).toBe(0);
    expect(empty.tokens).toBeGreaterThanOrEqual(0);
    // 5 a second: after 450 ms at least two whole tokens are back (more on a slow machine, at most 5).
    await sleep(450);
    const refilled = await repo.lease('k1', 5, 5);
    expect(refilled.granted).toBeGreaterThanOrEqual(2);
    expect(refilled.granted + refilled.tokens).toBeLessThanOrEqual(5);
    // A key of its own, and a bucket never holds more than the rate however long it waits.
    expect(await repo.lease('k2', 10, 5)).toEqual({ granted: 5, tokens: 0 });
  });

  it('deleting an API key deletes its bucket, and only its own', async () => {
    const sql = pool(1);
    const [accounts, keys, buckets] = [createAccountsRepo(sql), createApiKeysRepo(sql), createRateBucketsRepo(sql)];
    await accounts.create({ id: 'acc_buckets', name: 'buckets', dailyQuota: 100 });
    for (const id of ['key_gone', 'key_kept']) {
      await keys.create({
        id,
        accountId: 'acc_buckets',
        name: id,
        permission: 'all',
        allowedDomains: [],
        keyHash: Buffer.from(id),
        keyPrefix: id,
      });
      await buckets.lease(id, 1, 5);
    }
    expect(await keys.softDelete('key_gone')).toBe(true);
    const left = await sql<
      { key_id: string }[]
    >`select key_id from rate_buckets where key_id in ('key_gone', 'key_kept')`;
    expect(left.map((r) => r.key_id)).toEqual(['key_kept']);
    expect(await keys.softDelete('key_gone')).toBe(false);
  });

  it('two processes leasing one bucket at once get no more than it holds and refills', async () => {
    const [a, b] = [createRateBucketsRepo(pool()), createRateBucketsRepo(pool())];
    const started = Date.now();
    const leases = await Promise.all(
      Array.from({ length: 200 }, (_, i) => (i % 2 === 0 ? a : b).lease('shared', 1, 50)),
    );
    const seconds = (Date.now() - started) / 1000;
    const granted = leases.reduce((n, l) => n + l.granted, 0);
    expect(granted).toBeGreaterThanOrEqual(50);
    expect(granted).toBeLessThanOrEqual(50 + Math.ceil(50 * seconds));
  });
});

/** p50 / p99 / mean in ms of `n` calls of `fn`, `concurrency` at a time. */
async function timed(n: number, concurrency: number, fn: () => Promise<unknown>) {
  const times: number[] = [];
  let started = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (started++ < n) {
        const t = performance.now();
        await fn();
        times.push(performance.now() - t);
      }
    }),
  );
  times.sort((x, y) => x - y);
  const at = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))]!;
  return { p50: at(0.5), p99: at(0.99), mean: times.reduce((s, x) => s + x, 0) / times.length };
}

describe('what a request pays for the shared rate limit', () => {
  it('a lease of 5 (the default at rate 100) costs one round trip per 5 requests; printed against one per request and none', async () => {
    const repo = createRateBucketsRepo(pool(20));
    const trips = new Map<string, number>();
    const counting = (name: string): BucketStore => ({
      lease: (k, w, r) => (trips.set(name, (trips.get(name) ?? 0) + 1), repo.lease(k, w, r)),
    });
    // A rate no run reaches, so every take is admitted and the figure is the cost of admitting; the lease
    // size is set apart from the rate (the default, 1/20 of it, is 5 at the default rate of 100).
    const rate = 100_000;
    // The other design: each request one UPDATE ... RETURNING of the key's row (the lease statement for 1).
    const perRequest = counting('per request');
    const limiters = {
      'in-process bucket (before)': createRateLimiter({ rate, store: createMemoryBuckets(), chunk: 1 }),
      'UPDATE ... RETURNING per request': { take: (key: string) => perRequest.lease(key, 1, rate) },
      'leased from PostgreSQL, 5 at a time': createRateLimiter({ rate, store: counting('5'), chunk: 5 }),
      'leased from PostgreSQL, 50 at a time': createRateLimiter({ rate, store: counting('50'), chunk: 50 }),
    };
    const figures: string[] = [];
    for (const [name, rl] of Object.entries(limiters)) {
      for (const concurrency of [1, 32]) {
        const key = `${name}-${concurrency}`;
        const f = await timed(2000, concurrency, () => rl.take(key));
        figures.push(
          `${name.padEnd(38)} ${String(concurrency).padStart(2)} at a time: p50 ${f.p50.toFixed(3)} ms, p99 ${f.p99.toFixed(3)} ms, mean ${f.mean.toFixed(3)} ms`,
        );
      }
    }
    console.info(
      `rate limit cost per request (2,000 takes each):\n${figures.join('\n')}\nround trips for 4,000 takes: ${JSON.stringify(Object.fromEntries(trips))}`,
    );
    expect(trips.get('per request')).toBe(4000);
    // Concurrent requests wait for the lease under way rather than each asking: at most 800 leases of 5, 80 of 50.
    expect(trips.get('5')).toBeLessThanOrEqual(4000 / 5 + 2);
    expect(trips.get('50')).toBeLessThanOrEqual(4000 / 50 + 2);
  });
});
