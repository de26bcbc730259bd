import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeEach, expect, it, onTestFailed } from 'vitest';
import { call, eventually } from '../helpers/http.js';
import { freePort } from '../helpers/ports.js';
import {
  childLogs,
  createDeployment,
  kill,
  killAll,
  spawnService,
  waitReady,
  type Child,
} from '../helpers/service-process.js';

/**
 * The first start's API key outlives a process that stops between creating it and printing it: it is kept
 * (owner-only) in the data dir before it commits, and the next start prints it in its banner, once, then
 * deletes the file. No log line ever carries it.
 */

let d: Awaited<ReturnType<typeof createDeployment>>;
afterAll(async () => {
  await killAll();
  await d?.sink.close();
});
beforeEach(() => {
  onTestFailed(() => console.error(childLogs()));
});

const logLine = (c: Child, msg: string) =>
  c.output
    .map((l) => {
      try {
        return JSON.parse(l) as Record<string, unknown>;
      } catch {
        return undefined;
      }
    })
    .find((l) => l?.msg === msg);

it('a first start stopped before its banner leaves its key to the next start, which prints it once', async () => {
  d = await createDeployment('first-key');
  // A worker whose Temporal does not answer waits for it, past the bootstrap and before the banner: stopped there.
  const first = spawnService('first', {
    ...d.env('worker'),
    TEMPORAL_ADDRESS: `127.0.0.1:${await freePort()}`,
    LOG_LEVEL: 'info',
    MAILER_LOG_FORMAT: 'auto',
  });
  await eventually(
    async () =>
      logLine(first, 'Temporal unreachable at start; retrying') ??
      (!first.alive && Promise.reject(new Error('exited'))),
    60_000,
    100,
  );
  const created = logLine(
    first,
    'first run: created the default account and its API key, which the banner shows (kept in the data dir until then)',
  );
  expect(created).toMatchObject({
    accountId: expect.stringMatching(/^acc_/),
    domain: 'example.com',
    keptIn: path.join(d.dataDir, 'first-run.json'),
  });
  expect(first.output.some((l) => l.includes('mailer is running'))).toBe(false);
  await kill(first);

  const file = path.join(d.dataDir, 'first-run.json');
  expect((await fs.stat(file)).mode & 0o777).toBe(0o600);
  const kept = JSON.parse(await fs.readFile(file, 'utf8')) as { accountId: string; domain: string; apiKey: string };
  expect(kept).toEqual({ accountId: created!.accountId, domain: 'example.com', apiKey: expect.stringMatching(/^mk_/) });
  // Not in any log line (stdout is a pipe here: JSON lines, as a log shipper reads them).
  expect(first.output.filter((l) => l.includes(kept.apiKey))).toEqual([]);

  const second = spawnService('second', { ...d.env('api'), LOG_LEVEL: 'info' });
  await waitReady(d.baseUrl, second);
  const shown = await eventually(async () => second.output.find((l) => l.startsWith('  API key')), 10_000);
  expect(shown).toContain(kept.apiKey);
  expect(second.output).toContain('The first run stopped before showing its API key. It is shown once, now; keep it:');
  expect(second.output.filter((l) => l.includes(kept.apiKey) && l.startsWith('{'))).toEqual([]);
  // Shown: no longer kept in clear.
  await eventually(
    async () =>
      fs.access(file).then(
        () => false,
        () => true,
      ),
    5_000,
  );

  // It is the key the first start created.
  expect((await call('GET', `${d.api}/events?limit=1`, { token: kept.apiKey })).status).toBe(200);
  expect((await call('GET', `${d.api}/events?limit=1`, { token: `${kept.apiKey.slice(0, -1)}x` })).status).toBe(401);
  await kill(second);

  // A third start has nothing left to show.
  const third = spawnService('third', { ...d.env('api'), LOG_LEVEL: 'info' });
  await waitReady(d.baseUrl, third);
  await eventually(async () => third.output.some((l) => l.includes('Ctrl-C stops everything')), 10_000);
  expect(third.output.filter((l) => l.includes(kept.apiKey))).toEqual([]);
}, 120_000);
