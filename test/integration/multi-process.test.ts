import { afterAll, beforeAll, beforeEach, describe, expect, it, onTestFailed } from 'vitest';
import { call, eventually, type JsonResponse } from '../helpers/http.js';
import { keyUsage, newKey, ownerOfPort, query, startMultiProcess } from '../helpers/multi-process.js';
import { childLogs, kill, killAll } from '../helpers/service-process.js';
import { controlSink, messageIdOf } from '../helpers/smtp-sink.js';
import { ADMIN_TOKEN } from '../helpers/stack.js';

/**
 * The service as it scales out: two API processes and two worker processes (MAILER_ROLE=api / worker) on one
 * PostgreSQL, one Temporal task queue and one receiving SMTP server. What one process guarantees must hold
 * for all of them together: each email delivered once, exact counters, Idempotency-Key, the daily quota,
 * the rate limit, and a worker killed mid-batch while the other finishes.
 */

const RATE = 50;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const mail = (tag: string, i: number) => ({
  from: 'sender@example.com',
  to: [`rcpt${i}@example.net`],
  subject: `${tag} ${i}`,
  text: `message ${i} of ${tag}`,
});

let mp: Awaited<ReturnType<typeof startMultiProcess>>;
let admin: string;
/** Everything the default account sent, as the tests count it. */
let sentByAccount = 0;

beforeAll(async () => {
  mp = await startMultiProcess(
    'multiproc',
    { apis: 2, workers: 2 },
    { MAILER_RATE_LIMIT: String(RATE), MAILER_SMTP_RETRY_FIRST_SECONDS: '1' },
  );
  admin = `${mp.api[0]}/admin`;
}, 120_000);
afterAll(async () => {
  await killAll();
  mp.d.sink.beforeAccept = async () => {};
  await mp.d.sink.close();
});
beforeEach(() => {
  onTestFailed(() => console.error(childLogs()));
});

const arrivals = (id: string) => mp.d.sink.counts().get(`<${id}@example.com>`) ?? 0;

async function sentToday(accountId: string): Promise<number> {
  return (await call<{ sent_today: number }>('GET', `${admin}/accounts/${accountId}`, { token: ADMIN_TOKEN })).body
    .sent_today;
}

/** Every email arrived, is recorded delivered, and (after time for a late second attempt) arrived once. */
async function expectDeliveredOnce(ids: string[], timeoutMs = 30_000): Promise<void> {
  await eventually(async () => ids.every((id) => arrivals(id) > 0), timeoutMs, 100);
  await eventually(
    async () => {
      const rows = await query<{ n: number }>(
        mp.d.databaseUrl,
        (sql) => sql`select count(*)::int as n from emails where id = any(${ids}) and status in ('sent', 'delivered')`,
      );
      return rows[0]!.n === ids.length;
    },
    20_000,
    200,
  );
  await sleep(2000);
  expect(ids.filter((id) => arrivals(id) !== 1)).toEqual([]);
}

/** Usage statistics are added to the database once a second by each API process: wait for both, then hold. */
async function expectKeyUsage(k: Awaited<ReturnType<typeof newKey>>, requests: number, emails: number): Promise<void> {
  await eventually(
    async () => {
      const u = await keyUsage(admin, k);
      return u.request_count >= requests && u.email_sent_count >= emails;
    },
    10_000,
    200,
  );
  await sleep(1500);
  expect(await keyUsage(admin, k)).toMatchObject({ request_count: requests, email_sent_count: emails });
}

describe('2 API and 2 worker processes on one database and task queue', () => {
  it('emails accepted by both APIs are each delivered once; usage and quota counters are exact', async () => {
    const k = await newKey(admin, 'spread');
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        call('POST', `${mp.api[i % 2]}/emails`, { token: k.key, body: mail('spread', i) }),
      ),
    );
    for (const a of answers) expect(a.status, a.text).toBe(200);
    const ids = answers.map((a) => a.body.id as string);
    expect(new Set(ids).size).toBe(40);
    await expectDeliveredOnce(ids);
    sentByAccount += 40;
    expect(await sentToday(k.accountId)).toBe(sentByAccount);
    await expectKeyUsage(k, 40, 40);
  });

  it('the same Idempotency-Key sent to both APIs at once makes one email', async () => {
    const k = await newKey(admin, 'idempotent');
    const body = mail('idempotent', 0);
    // The second of two concurrent requests may find the first still running: 409, retry after a second.
    const send = async (api: string): Promise<JsonResponse> => {
      for (let attempt = 0; ; attempt++) {
        const res = await call('POST', `${api}/emails`, {
          token: k.key,
          body,
          headers: { 'idempotency-key': 'same-key-both-apis' },
        });
        if (res.status !== 409 || attempt === 10) return res;
        await sleep(1000);
      }
    };
    const [a, b] = await Promise.all(mp.api.map(send));
    expect([a!.status, b!.status]).toEqual([200, 200]);
    expect(b!.body.id).toBe(a!.body.id);
    const replay = await send(mp.api[1]!);
    expect(replay.body.id).toBe(a!.body.id);
    const stored = await query<{ id: string }>(
      mp.d.databaseUrl,
      (sql) => sql`select id from emails where subject = 'idempotent 0'`,
    );
    expect(stored.map((r) => r.id)).toEqual([a!.body.id]);
    await expectDeliveredOnce([a!.body.id as string]);
    sentByAccount += 1;
    expect(await sentToday(k.accountId)).toBe(sentByAccount);
  });

  it(`the rate limit (${RATE}/s) holds for both APIs together, within 10 %`, async () => {
    const k = await newKey(admin, 'rate');
    const seconds = 3;
    const perApi = [0, 0];
    let refused = 0;
    let first = Infinity;
    let last = 0;
    const deadline = Date.now() + seconds * 1000;
    // 12 callers on each API, as fast as they are answered: far more than the rate.
    await Promise.all(
      Array.from({ length: 24 }, async (_, i) => {
        while (Date.now() < deadline) {
          const sentAt = Date.now();
          first = Math.min(first, sentAt);
          last = Math.max(last, sentAt);
          const res = await call('GET', `${mp.api[i % 2]}/emails/em_00000000000000000000000000`, { token: k.key });
          if (res.status === 429) {
            refused++;
            expect(res.body).toEqual({ error: 'too many requests', message: 'Rate limit exceeded' });
            expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
          } else {
            expect(res.headers.get('ratelimit-limit')).toBe(String(RATE));
            perApi[i % 2]! += 1;
          }
        }
      }),
    );
    const accepted = perApi[0]! + perApi[1]!;
    const allowed = RATE + RATE * ((last - first) / 1000);
    console.info(
      `rate limit over 2 API processes: ${accepted} admitted (${perApi.join(' + ')}), ${refused} refused in ${((last - first) / 1000).toFixed(2)} s; ` +
        `the bucket allows ${allowed.toFixed(0)}: ${((100 * (accepted - allowed)) / allowed).toFixed(1)} %`,
    );
    // The callers asked for well over the rate (else a low count would prove nothing), through both APIs.
    expect(refused).toBeGreaterThan(accepted / 2);
    expect(Math.min(...perApi)).toBeGreaterThan(0);
    expect(Math.abs(accepted - allowed) / allowed).toBeLessThanOrEqual(0.1);
  });

  it('a worker killed (SIGKILL) with messages of a batch in flight: the other worker delivers every email, none twice', async () => {
    const k = await newKey(admin, 'batch');
    // 5 messages are accepted; every later one reaches the sink and waits there for its 250, which never
    // comes: a kill now is outside RFC 1047's window, so a duplicate would be the service's fault.
    const control = controlSink(mp.d.sink, 5);
    const clientPort = new Map<string, number>();
    const held = mp.d.sink.beforeAccept;
    mp.d.sink.beforeAccept = (raw, session) => (
      clientPort.set(messageIdOf(raw), session.remotePort),
      held(raw, session)
    );
    const res = await call('POST', `${mp.api[1]}/emails/batch`, {
      token: k.key,
      body: { emails: Array.from({ length: 30 }, (_, i) => mail('batch', i)) },
    });
    expect(res.status, res.text).toBe(200);
    await eventually(async () => control.held.length >= 2, 60_000, 100);
    await sleep(500);

    // The worker with the most messages held is killed.
    const owners = await Promise.all(control.held.map((h) => ownerOfPort(clientPort.get(h.messageId)!, mp.workers)));
    const heldBy = mp.workers.map((w) => owners.filter((o) => o === w).length);
    const victim = mp.workers[heldBy.indexOf(Math.max(...heldBy))]!;
    expect(Math.max(...heldBy)).toBeGreaterThan(0);
    await kill(victim);
    control.refuseAll();
    await sleep(500);
    control.acceptAll();

    const ids = (
      await query<{ id: string }>(
        mp.d.databaseUrl,
        (sql) => sql`select id from emails where job_id = ${res.body.job_id as string}`,
      )
    ).map((r) => r.id);
    expect(ids).toHaveLength(30);
    // The killed worker's activity is noticed dead by its heartbeat time-out (15 s), then retried by the other.
    await expectDeliveredOnce(ids, 60_000);
    sentByAccount += 30;
    console.info(
      `worker kill: messages held at the kill by each worker ${JSON.stringify(heldBy)}, ${victim.name} killed; 30 delivered exactly once`,
    );
    const job = await call<{ sent_count: number; status: string }>(
      'GET',
      `${mp.api[0]}/emails/batch/${res.body.job_id as string}`,
      { token: k.key },
    );
    expect(job.body.sent_count).toBe(30);
    expect(await sentToday(k.accountId)).toBe(sentByAccount);
  }, 120_000);

  it('the daily quota holds when the requests are split over both APIs', async () => {
    const k = await newKey(admin, 'quota');
    const used = await sentToday(k.accountId);
    expect(used).toBe(sentByAccount);
    const quota = used + 10;
    expect(
      (await call('PATCH', `${admin}/accounts/${k.accountId}`, { token: ADMIN_TOKEN, body: { daily_quota: quota } }))
        .status,
    ).toBe(200);
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        call('POST', `${mp.api[i % 2]}/emails`, { token: k.key, body: mail('quota', i) }),
      ),
    );
    const ok = answers.filter((a) => a.status === 200);
    const refusedAnswers = answers.filter((a) => a.status === 429);
    expect(ok).toHaveLength(10);
    expect(refusedAnswers).toHaveLength(20);
    for (const r of refusedAnswers)
      expect(r.body.error).toMatch(new RegExp(`^daily quota exceeded \\(\\d+/${quota}\\)`));
    expect(await sentToday(k.accountId)).toBe(quota);
    await expectDeliveredOnce(ok.map((a) => a.body.id as string));
    await expectKeyUsage(k, 30, 10);
    const stored = await query<{ n: number }>(
      mp.d.databaseUrl,
      (sql) => sql`select count(*)::int as n from emails where account_id = ${k.accountId}`,
    );
    expect(stored[0]!.n).toBe(quota);
  });
});
