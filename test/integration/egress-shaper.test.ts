import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEgressRepo, type EgressRepo } from '../../src/db/index.js';
import { createSql, type Sql } from '../../src/db/sql.js';
import { parseEgressRules } from '../../src/delivery/egress/rules-file.js';
import { createEgressShaper, type EgressShaperHandle } from '../../src/delivery/egress/shaper.js';
import type { SourceAddress } from '../../src/domain/entities/egress.js';
import { createTestDatabase } from '../helpers/stack.js';

/**
 * Egress shaping's shared state against the real PostgreSQL (migration 32): the repository's writes keep the
 * later end, and two shapers (two worker processes, each with its own pool) share warm-up budgets,
 * suspensions and an operator's lift through it.
 */
let sqls: Sql[] = [];
let repo: EgressRepo;
const quiet = { warn: () => {}, error: () => {} };

beforeAll(async () => {
  const url = await createTestDatabase();
  sqls = [createSql(url, { max: 10 }), createSql(url, { max: 10 })];
  repo = createEgressRepo(sqls[0]!);
});

afterAll(async () => {
  await Promise.all(sqls.map((s) => s.end()));
});

const rules = parseEgressRules(`
[site.google]
mx = ["*.google.com"]
[[site.google.automation]]
match = '4\\.7\\.28'
action = "suspend"
duration = "1h"
`);

function shaper(i: number): EgressShaperHandle {
  return createEgressShaper({
    rules: { current: () => rules },
    repo: createEgressRepo(sqls[i]!),
    logger: quiet,
    syncEveryMs: 0,
  });
}

describe('egress repository', () => {
  it('keeps the later end of two suspensions, throttles and source suspensions; lifting clears them', async () => {
    const t = Date.now();
    const at = (min: number) => new Date(t + min * 60_000);
    await repo.suspend('r1', at(30));
    await repo.suspend('r1', at(10));
    await repo.throttle('r1', '60/min', at(20));
    await repo.throttle('r1', '10/min', at(5));
    await repo.suspendSource('r1', '127.0.0.3', at(15), new Date(t));
    await repo.suspendSource('r1', '127.0.0.3', at(5), new Date(t));
    await repo.suspendSource('r1', '127.0.0.4', at(-1), new Date(t - 120_000));
    await repo.suspendSource('r1', '127.0.0.5', at(1), new Date(t));
    const [row] = (await repo.listSites()).filter((s) => s.site === 'r1');
    expect(row!.suspendedUntil).toEqual(at(30));
    expect(row!.throttleRate).toBe('60/min');
    expect(row!.throttledUntil).toEqual(at(20));
    // 127.0.0.4's ended before the last write's `now`: dropped.
    expect(row!.suspendedSources).toEqual([
      { address: '127.0.0.3', until: at(15).toISOString() },
      { address: '127.0.0.5', until: at(1).toISOString() },
    ]);

    const lifted = await repo.liftSuspension('r1');
    expect(lifted).toMatchObject({
      site: 'r1',
      suspendedUntil: null,
      throttleRate: null,
      throttledUntil: null,
      suspendedSources: [],
    });
    expect(await repo.liftSuspension('nobody-sends-here')).toBeNull();
  });

  it('flushes live figures and keeps the last 10 replies, newest first', async () => {
    const reply = (n: number) => ({
      at: new Date(n).toISOString(),
      code: 421,
      status: '4.7.0',
      text: `r${n}`,
      source: '',
      action: '',
    });
    await repo.flush('r2', { connections: 2, attemptsLastMinute: 7, newReplies: [3, 2, 1].map(reply) });
    await repo.flush('r2', {
      connections: 1,
      attemptsLastMinute: 0,
      newReplies: [12, 11, 10, 9, 8, 7, 6, 5].map(reply),
    });
    const [row] = (await repo.listSites()).filter((s) => s.site === 'r2');
    expect(row).toMatchObject({ connections: 1, attemptsLastMinute: 0 });
    expect(row!.lastReplies.map((r) => r.text)).toEqual([
      'r12',
      'r11',
      'r10',
      'r9',
      'r8',
      'r7',
      'r6',
      'r5',
      'r3',
      'r2',
    ]);
  });

  it('never reserves past the allowance, however many reserve at once', async () => {
    const grants = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        createEgressRepo(sqls[i % 2]!).reserveWarmup('192.0.2.1', '2026-11-28', 10, 95),
      ),
    );
    expect(grants.reduce((a, b) => a + b, 0)).toBe(95);
    expect(grants.every((g) => g >= 0 && g <= 10)).toBe(true);
    expect((await repo.warmupUsage('2026-11-28')).get('192.0.2.1')).toBe(95);
    expect(await repo.reserveWarmup('192.0.2.1', '2026-11-28', 10, 95)).toBe(0);
    expect((await repo.warmupUsage('2026-11-29')).size).toBe(0);
  });
});

describe('two shapers sharing the database', () => {
  it('never pass a warm-up allowance under concurrent admission', async () => {
    const [a, b] = [shaper(0), shaper(1)];
    const today = new Date().toISOString().slice(0, 10);
    const source: SourceAddress = { address: '192.0.2.7', ehlo: 'mta.example', warmup: { start: today, daily: [37] } };
    const results = await Promise.all(
      Array.from({ length: 120 }, (_, i) => (i % 2 === 0 ? a : b).admit(`site-${i % 3}`, source, 1)),
    );
    const admitted = results.filter((r) => r.ok).length;
    expect(admitted).toBe(37);
    expect((await repo.warmupUsage(today)).get('192.0.2.7')).toBe(37);
    const refused = results.find((r) => !r.ok);
    expect(refused).toMatchObject({
      deferral: `4.4.5 held by egress shaping: source 192.0.2.7 warm-up allowance of 37 for ${today} spent`,
    });
    await Promise.all([a.close(), b.close()]);
  });

  it("honour one another's suspension after a sync, and an operator's lift ends it for both", async () => {
    const [a, b] = [shaper(0), shaper(1)];
    const action = a.observe(
      'google',
      null,
      { code: 421, status: '4.7.28', diagnostic: '421 4.7.28 unusual rate' },
      false,
    );
    expect(action).toEqual({ kind: 'suspend', durationMs: 3_600_000 });
    expect((await a.admit('google', null, 1)).ok).toBe(false);
    expect((await b.admit('google', null, 1)).ok).toBe(true);
    await a.sync(); // the suspension is written at once; the sync waits for it
    await b.sync();
    const held = await b.admit('google', null, 1);
    expect(held.ok).toBe(false);
    expect(held.ok === false && held.deferral).toMatch(/^4\.4\.5 held by egress shaping: site google suspended until /);
    const [row] = (await repo.listSites()).filter((s) => s.site === 'google');
    expect(row!.lastReplies[0]).toMatchObject({ code: 421, text: '421 4.7.28 unusual rate', action: 'suspend' });

    expect(await repo.liftSuspension('google')).toMatchObject({ site: 'google', suspendedUntil: null });
    await Promise.all([a.sync(), b.sync()]);
    expect((await a.admit('google', null, 1)).ok).toBe(true);
    expect((await b.admit('google', null, 1)).ok).toBe(true);
    await Promise.all([a.close(), b.close()]);
  });
});
