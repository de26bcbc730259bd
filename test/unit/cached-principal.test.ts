import { describe, expect, it } from 'vitest';
import { createGuard } from '../../src/api/guard.js';
import type { CallContext } from '../../src/api/call-context.js';
import type { KeyPrincipalRow } from '../../src/domain/entities/api-keys.js';
import { AppError, unavailable } from '../../src/errors.js';
import { createAuthService, type Principal } from '../../src/services/auth-service.js';
import { createAuthThrottle } from '../../src/services/auth-throttle.js';
import { createPrincipalCache } from '../../src/services/principal-cache.js';
import type { RateLimiter } from '../../src/services/rate-limiter.js';
import type { UsageRecorder } from '../../src/services/usage-recorder.js';
import { generateApiKey } from '../../src/services/secrets.js';

const { key, hash } = generateApiKey();

/** The key's row as the database holds it now (undefined: deleted); `reads` counts the lookups. */
function keyTable(initial: Partial<KeyPrincipalRow> = {}) {
  const table = {
    row: {
      keyId: 'key_1',
      keyHash: hash,
      accountId: 'acc_1',
      permission: 'all',
      allowedDomains: [],
      accountStatus: 'healthy',
      dailyQuota: 100,
      rateLimit: null,
      keyDailyQuota: null,
      expiresAt: null,
      fingerprint: 'fp1',
      ...initial,
    } as KeyPrincipalRow | undefined,
    reads: 0,
    findPrincipal: async (h: Buffer) => {
      table.reads++;
      return table.row && h.equals(table.row.keyHash) ? { ...table.row } : undefined;
    },
  };
  return table;
}

function authOver(table: ReturnType<typeof keyTable>, clock = { now: 0 }) {
  return createAuthService({
    findPrincipal: table.findPrincipal,
    adminToken: `adm_${'x'.repeat(40)}`,
    adminThrottle: createAuthThrottle({ perClient: 3, global: 5, windowMs: 60_000 }, () => 0),
    cache: createPrincipalCache(() => clock.now),
    now: () => new Date(clock.now),
  });
}

describe('authenticateCached: an immediate send on the key as this process read it lately', () => {
  it('reads the key on first use (no claim), then answers from the cache with a claim to confirm; authenticate always reads', async () => {
    const table = keyTable();
    const auth = authOver(table);
    const first = await auth.authenticateCached(key);
    expect(first.claim).toBeUndefined();
    expect(table.reads).toBe(1);
    const second = await auth.authenticateCached(key);
    expect(table.reads).toBe(1);
    expect(second.claim).toEqual({ keyId: 'key_1', fingerprint: 'fp1', keyHash: hash, confirmed: false });
    expect(second.accountId).toBe('acc_1');
    // Each call gets its own claim: confirming one confirms no other.
    expect((await auth.authenticateCached(key)).claim).not.toBe(second.claim);
    await auth.authenticate(key);
    expect(table.reads).toBe(2);
  });

  it('never caches a refusal: an unknown key is read (and refused) every time', async () => {
    const table = keyTable();
    table.row = undefined;
    const auth = authOver(table);
    for (let i = 0; i < 3; i++)
      await expect(auth.authenticateCached(key)).rejects.toMatchObject({ kind: 'unauthorized' });
    expect(table.reads).toBe(3);
  });

  it('a cached key that has expired since is read afresh, and refused with its expiry', async () => {
    const clock = { now: Date.parse('2026-11-29T10:00:00Z') };
    const table = keyTable({ expiresAt: new Date('2026-11-29T10:00:30Z') });
    const auth = authOver(table, clock);
    await auth.authenticateCached(key);
    clock.now += 31_000;
    await expect(auth.authenticateCached(key)).rejects.toThrow('This API key expired at 2026-11-29T10:00:30.000Z');
    expect(table.reads).toBe(2);
  });

  it('reads a key afresh once its cached read is a minute old', async () => {
    const clock = { now: 0 };
    const table = keyTable();
    const auth = authOver(table, clock);
    await auth.authenticateCached(key);
    clock.now = 59_999;
    expect((await auth.authenticateCached(key)).claim).toBeDefined();
    clock.now = 60_000;
    expect((await auth.authenticateCached(key)).claim).toBeUndefined();
    expect(table.reads).toBe(2);
  });

  it('reconfirm: a deleted key is its 401 and leaves the cache; a changed one says so', async () => {
    const table = keyTable();
    const auth = authOver(table);
    await auth.authenticateCached(key);
    const { claim } = await auth.authenticateCached(key);
    table.row = { ...table.row!, dailyQuota: 5, fingerprint: 'fp2' };
    const now = await auth.reconfirm(claim!);
    expect(now).toMatchObject({ changed: true, principal: { dailyQuota: 5 } });
    expect(now.principal.claim).toBeUndefined();
    // The row read afresh is what the cache holds now.
    expect((await auth.authenticateCached(key)).claim?.fingerprint).toBe('fp2');
    table.row = undefined;
    await expect(auth.reconfirm(claim!)).rejects.toMatchObject({ kind: 'unauthorized' });
    const reads = table.reads;
    await expect(auth.authenticateCached(key)).rejects.toMatchObject({ kind: 'unauthorized' });
    expect(table.reads).toBe(reads + 1);
  });
});

describe('principal cache bounds', () => {
  it('holds at most its size, the oldest read dropped first', () => {
    const cache = createPrincipalCache(() => 0, 2);
    const row = (n: number) => ({ keyHash: Buffer.from([n]), keyId: `k${n}` }) as KeyPrincipalRow;
    cache.set(row(1));
    cache.set(row(2));
    cache.set(row(1));
    cache.set(row(3));
    expect(cache.size).toBe(2);
    expect(cache.get(Buffer.from([2]))).toBeUndefined();
    expect(cache.get(Buffer.from([1]))?.keyId).toBe('k1');
    expect(cache.get(Buffer.from([3]))?.keyId).toBe('k3');
  });
});

describe('guard: a call on a cached key is answered only on the key as it is now', () => {
  const rateLimiter = { take: async () => ({ limit: 10, remaining: 9, reset: 1 }) } as unknown as RateLimiter;
  const usage = { request: () => {} } as unknown as UsageRecorder;
  const call = (rpc: string): CallContext =>
    ({ requestHeader: new Headers({ authorization: `Bearer ${key}` }), values: undefined, rpc }) as never;

  /** A guard over `table` with the key already cached, and the principals `run` was given. */
  async function setup() {
    const table = keyTable();
    const auth = authOver(table);
    await auth.authenticateCached(key);
    const guard = createGuard({ auth, rateLimiter, usage });
    const seen: Principal[] = [];
    return { table, guard, seen, reads: () => table.reads - 1 };
  }

  it('a send whose statement confirmed the claim is answered without reading the key', async () => {
    const { guard, seen, reads } = await setup();
    const out = await guard.guarded(call('sendEmail'), async (p) => {
      seen.push(p);
      p.claim!.confirmed = true;
      return 'sent';
    });
    expect(out).toBe('sent');
    expect(seen[0]!.claim).toBeDefined();
    expect(reads()).toBe(0);
  });

  it('other calls read the key afresh: no claim', async () => {
    const { guard, seen, reads } = await setup();
    await guard.guarded(call('listEmails'), async (p) => seen.push(p));
    expect(seen[0]!.claim).toBeUndefined();
    expect(reads()).toBe(1);
  });

  it('an answer no statement confirmed (a replayed Idempotency-Key, say) waits for the key read afresh: deleted, it is 401', async () => {
    const { table, guard, reads } = await setup();
    expect(await guard.guarded(call('sendEmail'), async () => 'replayed')).toBe('replayed');
    expect(reads()).toBe(1);
    await guard.guarded(call('sendEmail'), async () => 'warm');
    table.row = undefined;
    const err = await guard.guarded(call('sendEmail'), async () => 'replayed').catch((e: unknown) => e);
    expect(err).toMatchObject({ kind: 'unauthorized', message: 'Invalid or missing API key' });
  });

  it('a refusal on a key that changed since (a paused account resumed) runs again on the key as it is now', async () => {
    const seen: Principal[] = [];
    // The cache says paused; the database says healthy again.
    const pausedTable = keyTable({ accountStatus: 'paused', fingerprint: 'paused' });
    const auth = authOver(pausedTable);
    await auth.authenticateCached(key);
    pausedTable.row = { ...pausedTable.row!, accountStatus: 'healthy', fingerprint: 'healthy' };
    const g = createGuard({ auth, rateLimiter, usage });
    const out = await g.guarded(call('sendEmail'), async (p) => {
      seen.push(p);
      if (p.accountStatus === 'paused') throw new AppError('permission_denied', 'paused');
      return 'sent';
    });
    expect(out).toBe('sent');
    expect(seen.map((p) => [p.accountStatus, p.claim === undefined])).toEqual([
      ['paused', false],
      ['healthy', true],
    ]);
  });

  it('a refusal on an unchanged key stands; a claim the statement refused runs again; a 503 never does (it may hide a commit)', async () => {
    const { table, guard } = await setup();
    let runs = 0;
    const refused = await guard
      .guarded(call('sendEmail'), async () => {
        runs++;
        throw new AppError('validation', 'bad');
      })
      .catch((e: unknown) => e);
    expect(refused).toMatchObject({ kind: 'validation' });
    expect(runs).toBe(1);

    runs = 0;
    await guard.guarded(call('sendEmail'), async () => 'warm');
    const out = await guard.guarded(call('sendEmail'), async (p) => {
      runs++;
      if (p.claim) throw Object.assign(new Error('key changed'), { code: 'MQ401' });
      return 'sent';
    });
    expect([out, runs]).toEqual(['sent', 2]);

    runs = 0;
    await guard.guarded(call('sendEmail'), async () => 'warm');
    table.row = { ...table.row!, dailyQuota: 7, fingerprint: 'fp2' };
    const lost = await guard
      .guarded(call('sendEmail'), async () => {
        runs++;
        throw unavailable('lost');
      })
      .catch((e: unknown) => e);
    expect(lost).toMatchObject({ kind: 'unavailable' });
    expect(runs).toBe(1);
  });
});
