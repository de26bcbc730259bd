import { describe, expect, it } from 'vitest';
import { RELAY_CONNECTIONS } from '../../src/app/outbound-transport.js';
import { call, eventually } from '../helpers/http.js';
import { defaultAccountKey, useCrashDeployments } from '../helpers/crash-deployments.js';
import { kill, spawnService, waitReady, type Child } from '../helpers/service-process.js';
import { senderOf } from '../helpers/smtp-sink.js';
import { withDb } from '../helpers/with-db.js';

/**
 * The crash bound, measured under load (issue 22, item 11): sends keep coming while the worker process is
 * killed with SIGKILL and started again, KILLS times. The receiving server counts every copy (one per email and
 * recipient: each recipient's copy is a transaction of its own) when it has read the final dot, whether or not
 * the sender lived to see the 250: that is when a real server takes the message. Only copies the server had
 * read before a kill may arrive again (RFC 1047), once more per kill, and at most the bound docs/delivery.md
 * states per kill; nothing is lost.
 */

const KILLS = 3;
/**
 * The loads: sends a second, and each send's recipients. Emails to one or two recipients (a third to two), and
 * emails to 20 recipients each, whose copies outnumber the SMTP connections: an email's outcome is recorded
 * once all its copies are answered, and the copies answered meanwhile are kept at once (migration 0020), so
 * the bound is the same (before, 50-recipient emails duplicated up to 48 copies a kill).
 */
type Load = { name: string; rate: number; recipientsOf: (i: number) => string[] };
const LOADS: Load[] = [
  {
    name: 'emails to one or two recipients',
    rate: 100,
    recipientsOf: (i) => (i % 3 === 0 ? [`r${i}@example.net`, `cc${i}@example.org`] : [`r${i}@example.net`]),
  },
  {
    name: 'emails to 20 recipients each',
    rate: 5,
    recipientsOf: (i) => Array.from({ length: 20 }, (_, k) => `r${i}-${k}@example.net`),
  },
];
/** The receiving server's own work between the final dot and its 250 (writing, scanning), as real ones do. */
const SERVER_WORK_MS = 100;
const KILL_EVERY_MS = 4_000;
/**
 * At most this many copies arrive twice per kill, however many recipients an email has (docs/delivery.md, the
 * duplicate window): one in transfer per SMTP connection, and with it at most one already answered but not yet
 * recorded (its commit, or the keeping of an answered copy, one round trip away).
 */
const BOUND_PER_KILL = 2 * RELAY_CONNECTIONS;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const deployment = useCrashDeployments('crash-bound');

/** Sends at `load.rate` a second until stop(); every send must be accepted (the API is not killed). */
function steadyLoad(api: string, key: string, { rate: RATE, recipientsOf }: Load) {
  const ids: string[] = [];
  const failures: string[] = [];
  let running = true;
  const started = Date.now();
  const loop = (async () => {
    const inFlight = new Set<Promise<void>>();
    for (let i = 0; running; i++) {
      const due = started + (i * 1000) / RATE;
      if (due > Date.now()) await sleep(due - Date.now());
      const p = call('POST', `${api}/emails`, {
        token: key,
        body: { from: 'sender@example.com', to: recipientsOf(i), subject: `load ${i}`, text: `message ${i}` },
      })
        .then(
          (res) => {
            if (res.status === 200) ids.push(res.body.id as string);
            else failures.push(`${res.status} ${res.text}`);
          },
          (err: unknown) => {
            failures.push(String(err));
          },
        )
        .finally(() => inFlight.delete(p));
      inFlight.add(p);
    }
    await Promise.all(inFlight);
  })();
  return {
    ids,
    failures,
    stop: async () => {
      running = false;
      await loop;
    },
  };
}

describe('the crash bound, measured under load', () => {
  it.each(LOADS)(
    `the worker SIGKILLed ${KILLS} times under a steady load ($name): per kill, only copies the server had read arrive again, once per kill, at most the bound; none lost`,
    async (shape) => {
      const RATE = shape.rate;
      const started = Date.now();
      const d = await deployment({ MAILER_RATE_LIMIT: '100000' });
      // Which worker sent what: the kills so far when the connection opened (senderOf).
      const kills: number[] = [];
      const workerOf = senderOf(d.sink, () => kills.length);
      // Every copy as the server read it (final dot), by email and envelope recipient: when, and from which worker.
      const arrivals = new Map<string, { at: number; worker: number }[]>();
      d.sink.beforeAccept = async (raw, session) => {
        const emailId = /^x-mail-email-id:\s*(\S+)/im.exec(raw.toString('latin1'))?.[1] ?? '';
        const copy = `${emailId} ${session.envelope.rcptTo.map((r) => r.address).join(',')}`;
        const arrival = { at: Date.now(), worker: workerOf(session) };
        arrivals.set(copy, [...(arrivals.get(copy) ?? []), arrival]);
        await sleep(SERVER_WORK_MS);
      };
      const api = spawnService('api', d.env('api'));
      await waitReady(d.baseUrl, api);
      const key = await defaultAccountKey(d.baseUrl, 'crash-bound');
      await withDb(d.databaseUrl, (sql) => sql`update accounts set daily_quota = 1000000`);
      const load = steadyLoad(d.api, key, shape);

      let worker: Child = spawnService('worker-1', d.env('worker'));
      for (let k = 1; k <= KILLS; k++) {
        // Delivering at full speed when killed.
        const before = arrivals.size;
        await eventually(async () => arrivals.size >= before + RATE, 30_000, 20);
        await sleep(KILL_EVERY_MS - 1_000);
        await kill(worker);
        kills.push(Date.now());
        // A supervisor starts it again at once (as compose's restart policy does).
        worker = spawnService(`worker-${k + 1}`, d.env('worker'));
      }
      await sleep(1_000);
      await load.stop();
      expect(load.failures).toEqual([]);

      // The dead workers' emails come free once their leases lapse and Temporal retries their activities (15 s
      // each), then the backlog of the kills drains behind the load's last sends. On a 2-core machine about a
      // third as fast as this project's usual one, with the suite's other files running beside it, that took
      // more than a minute once (session 27): the bound asserted here is on copies, not on recovery time.
      await eventually(
        async () =>
          (await withDb(d.databaseUrl, (sql) => sql`select 1 from emails where status = 'pending' limit 1`)).length ===
          0,
        120_000,
        250,
      );
      await sleep(1_500);

      const expected = await withDb(
        d.databaseUrl,
        (sql) => sql<{ id: string; to_addresses: string[] }[]>`select id, to_addresses from emails`,
      );
      expect(expected).toHaveLength(load.ids.length);
      const expectedCopies = expected.flatMap((e) => e.to_addresses.map((to) => `${e.id} ${to}`)).sort();
      expect([...arrivals.keys()].sort(), 'every copy arrived, nothing else').toEqual(expectedCopies);

      // Every arrival of a copy after its first is a re-send, caused by the kill of the worker that sent the copy
      // before it: a later worker sends it again, never the same one, never the last (it is not killed). A copy
      // in transfer at two kills (read, killed, re-sent, read again, killed again) so arrives three times: once
      // more per kill it was in the window of, never more.
      const perKill = kills.map(() => 0);
      const wait: number[] = [];
      for (const [copy, seen] of arrivals) {
        for (let i = 1; i < seen.length; i++) {
          const [before, again] = [seen[i - 1]!, seen[i]!];
          const killed = before.worker >= 0 && before.worker < kills.length && again.worker > before.worker;
          const when = (a: { at: number; worker: number }) => `worker ${a.worker + 1} at ${a.at - started} ms`;
          expect(
            killed,
            `${copy}: arrival ${i + 1} (${when(again)}) is a later worker's after the kill of the one that sent arrival ${i} (${when(before)}); kills at ${kills.map((k) => k - started).join(', ')} ms`,
          ).toBe(true);
          perKill[before.worker]! += 1;
          wait.push(again.at - before.at);
        }
      }
      console.info(
        `crash bound under load, ${shape.name}: ${load.ids.length} emails (${expectedCopies.length} copies) at ${RATE}/s, ${KILLS} SIGKILLs of the worker; ` +
          `copies re-sent per kill: ${perKill.join(', ')} (bound ${BOUND_PER_KILL}); re-sends ${Math.min(...wait)}-${Math.max(...wait)} ms after the copy before ` +
          `(test ${Date.now() - started} ms)`,
      );
      for (const n of perKill) expect(n).toBeLessThanOrEqual(BOUND_PER_KILL);
    },
    240_000,
  );
});
