import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import postgres from 'postgres';
import { inject, it, expect } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/logger.js';
import { startMailer } from '../../src/main.js';
import { stackEnv, startStack } from '../helpers/stack.js';

const hexKey = () => crypto.randomBytes(32).toString('hex');

it('a process whose MAILER_ENCRYPTION_KEY did not seal the stored DKIM keys refuses to start, saying so', async () => {
  // The first process seals the default domain's key under its own encryption key.
  const first = await startStack({ MAILER_ENCRYPTION_KEY: hexKey() });
  const { databaseUrl, taskQueue } = first;
  const sinkUrl = first.sink.url;
  await first.stop();

  const dataDir = path.join(inject('tmpRoot'), `${taskQueue}-second`);
  await fs.mkdir(dataDir, { recursive: true });
  const env = stackEnv(databaseUrl, sinkUrl, taskQueue, dataDir, { MAILER_ENCRYPTION_KEY: hexKey() });
  const started = startMailer(loadConfig(env), { logger: createLogger('fatal', 'test'), env: process.env });
  await expect(started).rejects.toThrow(/sealed under another encryption key .*the same MAILER_ENCRYPTION_KEY/);
});

it('a process whose encryption key is not the one the database records refuses to start, DKIM keys or none, naming MAILER_ENCRYPTION_KEY', async () => {
  // Two processes of one installation that each generated a key into their own data dir (no MAILER_ENCRYPTION_KEY).
  const first = await startStack();
  const { databaseUrl, taskQueue } = first;
  const sinkUrl = first.sink.url;
  const [recorded] = await first.mailer.sql<
    { value: string }[]
  >`select value from settings where name = 'encryption_key_fingerprint'`;
  expect(recorded?.value).toMatch(/^[A-Za-z0-9_-]{8}$/);
  // No DKIM key sealed yet: what the second process sees when it starts before the first has made any (they
  // start at once), and the state the DKIM check could not catch.
  await first.mailer.sql`delete from dkim_keys`;
  await first.stop();

  const dataDir = path.join(inject('tmpRoot'), `${taskQueue}-own-key`);
  await fs.mkdir(dataDir, { recursive: true });
  const env = stackEnv(databaseUrl, sinkUrl, taskQueue, dataDir);
  const started = startMailer(loadConfig(env), { logger: createLogger('fatal', 'test'), env: process.env });
  await expect(started).rejects.toThrow(
    new RegExp(`not the one this installation's database records \\(id ${recorded!.value}\\).*MAILER_ENCRYPTION_KEY`),
  );
  // It made nothing under its own key.
  const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} });
  try {
    expect(await sql`select id from dkim_keys`).toHaveLength(0);
    expect(
      (await sql<{ value: string }[]>`select value from settings where name = 'encryption_key_fingerprint'`)[0]?.value,
    ).toBe(recorded!.value);
  } finally {
    await sql.end();
  }
});
